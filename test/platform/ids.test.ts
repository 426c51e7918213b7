import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emailToken, encodeKsuid, ksuid, newId, randomAlphanumeric, looksLikeId } from '../../src/platform/ids.ts';

test('ids are a prefix and 27 time-ordered base62 characters', async () => {
  const a = newId('key');
  assert.match(a, /^key_[A-Za-z0-9]{27}$/);
  assert.ok(looksLikeId(a, 'key'));
  assert.ok(!looksLikeId(a, 'dom'));
  assert.ok(!looksLikeId('key_short', 'key'));
  await new Promise((r) => setTimeout(r, 1100));
  const b = newId('key');
  assert.ok(b > a, 'a later id sorts after an earlier one');
});

test('randomAlphanumeric gives the length asked for, from the whole alphabet, evenly', () => {
  for (const n of [1, 32, 100]) assert.match(randomAlphanumeric(n), new RegExp(`^[A-Za-z0-9]{${n}}$`));
  const counts = new Map<string, number>();
  const sample = randomAlphanumeric(62 * 2000);
  for (const c of sample) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 62);
  for (const [c, count] of counts) assert.ok(count > 1500 && count < 2500, `${c}: ${count}`);
});

test('our KSUIDs are the format of the ksuid package: same timestamp, 27 characters, round-trip', async () => {
  const { createRequire } = await import('node:module');
  const KSUID = createRequire(import.meta.url)('ksuid') as { parse(s: string): { date: Date; string: string; payload: Buffer } };
  const at = Date.UTC(2026, 10, 22, 12, 34, 56);
  for (let i = 0; i < 200; i++) {
    const id = ksuid(at);
    const parsed = KSUID.parse(id);
    assert.equal(parsed.date.getTime(), at, 'the timestamp decodes to the second it was made');
    assert.equal(parsed.string, id, 'the package re-encodes it to the same string');
    assert.equal(parsed.payload.length, 16);
  }
  assert.ok(ksuid(at) < ksuid(at + 1000), 'a later second sorts after');
  // Given bytes encode exactly as the package encodes them, extremes included.
  const { randomBytes } = await import('node:crypto');
  const payloads = [Buffer.alloc(16), Buffer.alloc(16, 0xff), ...Array.from({ length: 200 }, () => randomBytes(16))];
  for (const [i, payload] of payloads.entries()) {
    const timestamp = [0, 0xffffffff][i] ?? randomBytes(4).readUInt32BE(0);
    const expected = (KSUID as any).fromParts((timestamp + 1_400_000_000) * 1000, payload).string;
    assert.equal(encodeKsuid(timestamp, payload), expected);
  }
});

test('email tokens are 32 letters and digits that sort by the second they were made, and differ within one', () => {
  const at = Date.UTC(2026, 10, 29, 6, 40, 0);
  const same = Array.from({ length: 1000 }, () => emailToken(at));
  for (const token of same) assert.match(token, /^[A-Za-z0-9]{32}$/);
  assert.equal(new Set(same).size, same.length, 'the random part differs');
  assert.equal(new Set(same.map((t) => t.slice(0, 6))).size, 1, 'one second, one prefix');
  // Later seconds sort after as plain text (a byte-wise index), over carries of every digit.
  for (const later of [at + 1000, at + 62_000, at + 3_844_000, at + 86_400_000, at + 400 * 86_400_000]) {
    assert.ok(emailToken(at) < emailToken(later), `${later - at} ms later sorts after`);
  }
});
