// Blocks are not bounces (issue 19, postal #60): a receiver that answers a reputation block with
// 550 leaves the email attempted (retried later) and the recipient unsuppressed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from './helpers.ts';

let app: DeliveryApp;
before(async () => {
  app = await startDeliveryApp();
});
after(async () => {
  await app.close();
});

test('a 550 reputation block is retried and never suppresses the recipient', async () => {
  app.sink.addRule({ match: 'customer@example.org', reply: { code: 550, message: '5.7.1 Your IP has very low reputation, blocked' } });
  const res = await app.api.post('/v2/emails', { from: 'Acme <hello@acme.test>', to: 'customer@example.org', subject: 'Hi', text: 'Hi' });
  assert.equal(res.status, 200, res.text);
  await app.waitForStatus(res.body.id, 'attempted');
  assert.deepEqual((await app.attemptsOf(res.body.id)).map((a) => [a.outcome, a.smtp_code]), [['temporary', 550]]);
  assert.equal((await app.api.get('/v2/suppressions/customer%40example.org')).status, 404);
});
