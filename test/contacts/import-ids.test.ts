// The ids an import hands out: ordinary ids (prefix and 27-character KSUID), unique, and
// ascending across the whole import, also when the second changes between two of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AscendingIds } from '../../src/resources/contacts/import/ids.ts';
import { looksLikeId } from '../../src/platform/ids.ts';

test('import ids are well-formed, unique and ascending, across seconds too', async () => {
  const ids = new AscendingIds('con');
  const out: string[] = [];
  for (let i = 0; i < 20_000; i++) out.push(ids.next());
  await new Promise((resolve) => setTimeout(resolve, 1100));
  for (let i = 0; i < 1000; i++) out.push(ids.next());
  assert.ok(out.every((id) => looksLikeId(id, 'con')));
  assert.equal(new Set(out).size, out.length);
  for (let i = 1; i < out.length; i++) assert.ok(out[i - 1] < out[i], `ascending at ${i}: ${out[i - 1]} then ${out[i]}`);
  // Two imports at once (or an import beside the API) never share an id.
  const other = new AscendingIds('con');
  const theirs = new Set(Array.from({ length: 20_000 }, () => other.next()));
  assert.ok(out.every((id) => !theirs.has(id)));
});
