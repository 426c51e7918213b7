// The relay remembers an accepted message by its Message-ID and envelope for 24 hours (issue
// 20): a client that sends it again (it lost the 250, the server was killed) gets the first
// reply and no second email; while the first is still being accepted, 451 to retry later.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { beginIdempotent, releaseIdempotent } from '../../src/platform/idempotency.ts';
import { submissionKey } from '../../src/smtp/submission.ts';
import { eventually } from '../helpers/app.ts';
import { startSmtpApp, submit, type SmtpApp } from './helpers.ts';

let app: SmtpApp;

before(async () => {
  app = await startSmtpApp();
});
after(async () => {
  await app?.close();
});

const relay = () => ({ port: app.ports.submission, key: app.key });
const db = () => app.running.ctx.db;
const emailsWithSubject = (subject: string) => db().selectFrom('emails').selectAll().where('subject', '=', subject).execute();
async function credits() {
  const row = await db().selectFrom('workspaces').select('credits').where('id', '=', app.workspace.id).executeTakeFirstOrThrow();
  return Number(row.credits);
}
const atSink = (subject: string) => app.sink.messages.filter((m) => m.raw.toString().includes(`Subject: ${subject}`));

test('the same Message-ID and envelope again: the first reply, one email, one credit, one delivery', async () => {
  const mail = { from: 'hello@acme.test', to: 'once@example.org', subject: 'Sent twice', text: 'x', messageId: '<order-1@client.example>' };
  const before = await credits();
  const first = await submit(relay(), mail);
  assert.equal(first.ok, true, first.response);
  const second = await submit(relay(), mail);
  assert.equal(second.ok, true, second.response);
  assert.equal(second.response, first.response, 'the same `250 2.0.0 OK: queued as em_…`');
  // A third time, after the first was delivered: still the same answer.
  await app.waitForStatus(first.id!, 'delivered');
  assert.equal((await submit(relay(), { ...mail, text: 'changed body, same message' })).response, first.response);
  assert.equal((await emailsWithSubject('Sent twice')).length, 1);
  assert.equal(await credits(), before - 1);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(atSink('Sent twice').length, 1, 'delivered once');
});

test('another envelope or another Message-ID is another message', async () => {
  const base = { from: 'hello@acme.test', subject: 'Same id', text: 'x', messageId: '<order-2@client.example>' };
  const a = await submit(relay(), { ...base, to: 'a@example.org' });
  const b = await submit(relay(), { ...base, to: 'b@example.org' });
  const c = await submit(relay(), { ...base, to: 'a@example.org', messageId: '<order-3@client.example>' });
  // Recipients in another order and case are the same envelope.
  const ab = await submit(relay(), { ...base, to: ['a@example.org', 'b@example.org'] });
  const ba = await submit(relay(), { ...base, to: ['b@EXAMPLE.org', 'a@example.org'] });
  for (const sent of [a, b, c, ab, ba]) assert.equal(sent.ok, true, sent.response);
  assert.equal(new Set([a.id, b.id, c.id, ab.id]).size, 4);
  assert.equal(ba.id, ab.id);
  assert.equal((await emailsWithSubject('Same id')).length, 5, 'a, b, c and the two copies of ab');
});

test('while the first submission is still being accepted, the same message gets 451 and is not stored; then it goes through', async () => {
  const mail = {
    from: 'hello@acme.test',
    to: 'busy@example.org',
    subject: 'In progress',
    text: 'x',
    messageId: '<order-4@client.example>',
  };
  // Another connection (or process) holds the message: its claim, taken as the relay takes it.
  const key = submissionKey('<order-4@client.example>', 'hello@acme.test', ['busy@example.org'])!;
  const held = await beginIdempotent(db(), app.workspace.id, key);
  assert.equal(held.kind, 'new');
  const refused = await submit(relay(), mail);
  assert.equal(refused.ok, false);
  assert.equal(refused.code, 451, refused.response);
  assert.match(refused.response, /^451 4\.3\.0 A message with this Message-ID and envelope is still being accepted/);
  assert.equal((await emailsWithSubject('In progress')).length, 0);
  // The first one failed and let go: the retry is accepted as a new message.
  assert.equal(await releaseIdempotent(db(), app.workspace.id, key, held.kind === 'new' ? held.token : ''), true);
  const retried = await submit(relay(), mail);
  assert.equal(retried.ok, true, retried.response);
  assert.equal((await emailsWithSubject('In progress')).length, 1);
});

test('a refused message is not remembered: sent again once the cause is gone, it is accepted', async () => {
  const mail = {
    from: 'hello@unverified-dedupe.test',
    to: 'x@example.org',
    subject: 'Refused first',
    text: 'x',
    messageId: '<order-5@client.example>',
  };
  const refused = await submit(relay(), mail);
  assert.equal(refused.code, 530, refused.response);
  await app.verifiedDomain('unverified-dedupe.test');
  const accepted = await submit(relay(), mail);
  assert.equal(accepted.ok, true, accepted.response);
  await eventually(async () => (await emailsWithSubject('Refused first')).length === 1);
});

test('a message without a Message-ID cannot be recognised: each submission is a new email', async () => {
  const raw = 'From: hello@acme.test\r\nTo: noid@example.org\r\nSubject: No id\r\n\r\nbody\r\n';
  const envelope = { from: 'hello@acme.test', to: ['noid@example.org'] };
  const first = await submit(relay(), { envelope, raw });
  const second = await submit(relay(), { envelope, raw });
  assert.equal(first.ok && second.ok, true, `${first.response} / ${second.response}`);
  assert.notEqual(first.id, second.id);
  const rows = await emailsWithSubject('No id');
  assert.equal(rows.length, 2);
  const content = await db().selectFrom('email_contents').select('raw').where('id', '=', rows[0].content_id).executeTakeFirstOrThrow();
  assert.doesNotMatch(content.raw!, /^Message-ID:/im, 'the client sent none');
});
