// Every API resource is a folder here whose routes.ts exports `resource`. They are found at
// start (in name order), so adding a resource never means editing a shared list.
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Resource } from '../platform/resource.ts';

export type { Resource, Role } from '../platform/resource.ts';

let loaded: Promise<Resource[]> | null = null;

export function loadResources(): Promise<Resource[]> {
  loaded ??= (async () => {
    const folders = readdirSync(import.meta.dirname, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(import.meta.dirname, entry.name, 'routes.ts')))
      .map((entry) => entry.name)
      .sort();
    const resources: Resource[] = [];
    for (const folder of folders) {
      const module = (await import(pathToFileURL(join(import.meta.dirname, folder, 'routes.ts')).href)) as { resource?: Resource };
      if (!module.resource) throw new Error(`src/resources/${folder}/routes.ts does not export \`resource\``);
      resources.push(module.resource);
    }
    return resources;
  })();
  return loaded;
}
