// The same write sent many times at once: on PostgreSQL the losers of a find-then-insert race
// or a deadlock run their transaction again and get the answer a late request gets (409, or the
// row that now exists), never a 500. On SQLite writes take turns, so the answers are the same.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

const ROUNDS = 6;
const AT_ONCE = 8;
const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {});

test('one address subscribed to one audience by many requests at once: one 201, the others 409', async () => {
  const { api } = await app.newWorkspace({ plan: 'pro' });
  const audience = await api.post('/v2/audiences', { name: 'Racing' });
  assert.equal(audience.status, 201, audience.text);
  for (let round = 0; round < ROUNDS; round++) {
    const email = `racer-${round}@example.org`;
    const answers = await Promise.all(
      Array.from({ length: AT_ONCE }, () => api.post(`/v2/audiences/${audience.body.id}/subscribers`, { email })),
    );
    const statuses = answers.map((a) => a.status);
    assert.deepEqual(tally(statuses), { 201: 1, 409: AT_ONCE - 1 }, `round ${round}: ${answers.find((a) => a.status >= 500)?.text ?? ''}`);
  }
  const list = await api.get(`/v2/audiences/${audience.body.id}/subscribers`);
  assert.equal(list.body.data.length, ROUNDS);
});

test('one API key name created by many requests at once: one 201, the others 409 naming the key that won', async () => {
  const { api } = await app.newWorkspace({ plan: 'pro' });
  for (let round = 0; round < ROUNDS; round++) {
    const name = `racing key ${round}`;
    const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => api.post('/v2/api-keys', { name, scope: 'sending' })));
    assert.deepEqual(
      tally(answers.map((a) => a.status)),
      { 201: 1, 409: AT_ONCE - 1 },
      `round ${round}: ${answers.find((a) => a.status >= 500)?.text ?? ''}`,
    );
  }
});
