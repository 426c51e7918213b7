// Every resource is a folder here whose routes.ts (HTTP resources) or resource.ts (workers and
// listeners without routes of their own) exports `resource`. They are found at start, in name
// order, so adding a resource never means editing a shared list.
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Resource } from '../platform/resource.ts';

export type { Resource, Role } from '../platform/resource.ts';

let loaded: Promise<Resource[]> | null = null;

export function loadResources(): Promise<Resource[]> {
  loaded ??= (async () => {
    const folders = readdirSync(import.meta.dirname, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    const resources: Resource[] = [];
    for (const folder of folders) {
      for (const file of ['routes.ts', 'resource.ts']) {
        const path = join(import.meta.dirname, folder, file);
        if (!existsSync(path)) continue;
        const module = (await import(pathToFileURL(path).href)) as { resource?: Resource };
        if (!module.resource) throw new Error(`src/resources/${folder}/${file} does not export \`resource\``);
        resources.push(module.resource);
      }
    }
    return resources;
  })();
  return loaded;
}
