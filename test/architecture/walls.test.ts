// The walls between the layers (.dependency-cruiser.cjs, docs/architecture.md "Walls"), run as
// `npm run walls` runs them: the rules fire on a small tree that breaks each of them, stay
// quiet on the imports they allow, and the real tree has no violation beyond the known ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const DEPCRUISE = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
const RULES = join(ROOT, '.dependency-cruiser.cjs');

function depcruise(cwd: string, args: string[]) {
  return spawnSync(process.execPath, [DEPCRUISE, ...args], { cwd, encoding: 'utf8' });
}

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

test('each wall reports the import that breaks it, and only that', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'postlane-walls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }),
    // Upward: the platform importing a feature.
    'src/platform/app.ts': "import { notes } from '../resources/notes/service.ts';\nexport const app = notes;\n",
    // Upward: the delivery intake importing a feature.
    'src/delivery/intake.ts': "import { notes } from '../resources/notes/service.ts';\nexport const intake = notes;\n",
    // A cycle inside one layer.
    'src/mail/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
    'src/mail/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
    // A feature reaching into another's private module, and one using its public face.
    'src/resources/notes/store.ts': 'export const rows: string[] = [];\n',
    'src/resources/notes/service.ts': "import { rows } from './store.ts';\nexport const notes = rows;\n",
    'src/resources/tags/service.ts': "import { rows } from '../notes/store.ts';\nexport const tags = rows;\n",
    'src/resources/tags/routes.ts':
      "import { notes } from '../notes/service.ts';\nimport { tags } from './service.ts';\nexport const routes = [notes, tags];\n",
    // Browser code importing a server module, and its own generated API types.
    'dashboard/src/api/schema.d.ts': 'export interface paths {}\n',
    // Code the browser shares with the server: allowed to the dashboard, but it may use neither a
    // Node built-in nor a server module.
    'src/resources/forms/definition.ts': "import { readFileSync } from 'node:fs';\nexport const definition = readFileSync;\n",
    'src/resources/forms/service.ts': 'export const forms = 1;\n',
    'src/resources/forms/embed/form.ts':
      "import { forms } from '../service.ts';\nimport { definition } from '../definition.ts';\nexport const form = [forms, definition];\n",
    'dashboard/src/preview.ts': "import { form } from '../../src/resources/forms/embed/form.ts';\nexport const preview = form;\n",
    'dashboard/src/main.ts':
      "import type { paths } from './api/schema.d.ts';\nimport { notes } from '../../src/resources/notes/service.ts';\nexport const main: [paths?, unknown?] = [undefined, notes];\n",
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }

  const run = depcruise(dir, ['src', 'dashboard/src', '--config', RULES, '--output-type', 'json', '--no-ignore-known']);
  assert.equal(run.status, 0, run.stderr); // the json reporter leaves the exit code to the err one
  const violations = (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;
  const found = violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
  assert.deepEqual(
    found,
    [
      'browser-shared-stays-browser-safe: src/resources/forms/embed/form.ts -> src/resources/forms/service.ts',
      'browser-shared-uses-no-node-builtin: src/resources/forms/definition.ts -> fs',
      'dashboard-uses-generated-types-only: dashboard/src/main.ts -> src/resources/notes/service.ts',
      'features-meet-through-public-faces: src/resources/tags/service.ts -> src/resources/notes/store.ts',
      'layers-know-no-feature: src/delivery/intake.ts -> src/resources/notes/service.ts',
      'layers-know-no-feature: src/platform/app.ts -> src/resources/notes/service.ts',
      'no-cycles: src/mail/a.ts -> src/mail/b.ts',
    ].sort(),
  );
});

test('the real tree breaks no wall beyond the known violations', () => {
  const run = depcruise(ROOT, ['src', 'dashboard/src', '--config', RULES, '--ignore-known']);
  assert.equal(run.status, 0, run.stdout + run.stderr);
});
