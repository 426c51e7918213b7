// An Events Only key sends no mail through the SMTP relay either: its AUTH fails as a bad
// key's does, and nothing is stored.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSmtpApp, submit, type SmtpApp } from '../smtp/helpers.ts';

let app: SmtpApp;
before(async () => {
  app = await startSmtpApp();
});
after(() => app?.close());

test('SMTP AUTH with an Events Only key: 535, nothing stored; a full key still relays', async () => {
  const events = (await app.api.post('/v2/api-keys', { name: 'events only', scope: 'events' })).body.key;
  const refused = await submit(
    { port: app.ports.submission, key: events },
    { from: 'hello@acme.test', to: 'jane@example.org', subject: 'Nope', text: 'x' },
  );
  assert.equal(refused.ok, false);
  assert.equal(refused.response, '535 5.7.8 Authentication failed');
  const stored = await app.running.ctx.db.selectFrom('emails').select('id').where('from_address', '=', 'hello@acme.test').execute();
  assert.equal(stored.length, 0);
  const relayed = await submit(
    { port: app.ports.submission, key: app.key },
    { from: 'hello@acme.test', to: 'jane@example.org', subject: 'Yes', text: 'x' },
  );
  assert.equal(relayed.ok, true, relayed.response);
});
