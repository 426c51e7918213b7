#!/usr/bin/env node
// The CLI runs the TypeScript sources directly, which needs Node 24's type stripping.
// When started by an older system Node, re-run under the Node pinned in devDependencies.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'src', 'main.ts');
const major = Number(process.versions.node.split('.')[0]);
if (major >= 24) {
  await import(entry);
} else {
  const pinned = join(root, 'node_modules', 'node', 'bin', 'node');
  const node = existsSync(pinned) ? pinned : 'node';
  const result = spawnSync(node, [entry, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
