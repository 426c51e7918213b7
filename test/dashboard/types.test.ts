// The dashboard's API types are generated from /openapi.json: this fails when a route's
// schemas changed and `npm run dashboard:types` was not run (or the file was edited by hand).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TYPES_FILE, typesFromDocument } from '../../dashboard/generate-types.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.close();
});

test('dashboard/src/api/schema.d.ts matches the running /openapi.json', async () => {
  const document = await (await fetch(`${app.url}/openapi.json`)).json();
  const expected = await typesFromDocument(document as Record<string, unknown>);
  const committed = readFileSync(TYPES_FILE, 'utf8');
  assert.ok(
    committed === expected,
    "The dashboard's API types are stale: run `npm run dashboard:types` and commit dashboard/src/api/schema.d.ts",
  );
});
