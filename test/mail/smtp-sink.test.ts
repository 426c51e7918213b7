import { test } from 'node:test';
import assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

const send = (port: number, to: string, extra: Record<string, unknown> = {}) =>
  nodemailer
    .createTransport({ host: '127.0.0.1', port, tls: { rejectUnauthorized: false }, logger: false, ...extra })
    .sendMail({ envelope: { from: 'a@acme.test', to: [to] }, raw: 'Subject: t\r\n\r\nbody\r\n' });

test('the sink answers a programmable share of recipients with 4xx/5xx (benchmark mode)', async (t) => {
  // A fixed sequence of rolls: 0.005 → permanent (< 0.01), 0.03 → temporary (< 0.01 + 0.05), 0.5 → accepted.
  const rolls = [0.005, 0.03, 0.5];
  let n = 0;
  const sink = await startSmtpSink({
    keepMessages: false,
    randomFailures: { permanent: 0.01, temporary: 0.05, random: () => rolls[n++ % rolls.length] },
  });
  t.after(() => sink.close());
  await assert.rejects(send(sink.port, 'a@x.test'), (error: any) => error.responseCode === 550);
  await assert.rejects(send(sink.port, 'b@x.test'), (error: any) => error.responseCode === 451);
  await send(sink.port, 'c@x.test');
  assert.equal(sink.accepted, 1);
  assert.deepEqual(sink.messages, [], 'counted, not kept');
  assert.deepEqual(sink.refusals, [
    { rcpt: 'a@x.test', code: 550, stage: 'rcpt' },
    { rcpt: 'b@x.test', code: 451, stage: 'rcpt' },
  ]);
});

test('rules match a local part or a full address, may expire, and AUTH can be required', async (t) => {
  const sink = await startSmtpSink({ auth: { user: 'u', pass: 'p' } });
  t.after(() => sink.close());
  const auth = { auth: { user: 'u', pass: 'p' } };
  await assert.rejects(send(sink.port, 'x@y.test', { auth: { user: 'u', pass: 'wrong' } }), (error: any) => error.responseCode === 535);
  await assert.rejects(send(sink.port, 'BOUNCE@any.test', auth), (error: any) => error.responseCode === 550);
  sink.addRule({ match: 'once@y.test', reply: { code: 452, message: '4.2.2 Mailbox full' }, times: 1 });
  await assert.rejects(send(sink.port, 'once@y.test', auth), (error: any) => error.responseCode === 452);
  await send(sink.port, 'once@y.test', auth);
  const waiting = sink.waitForMessages(2);
  await send(sink.port, 'two@y.test', auth);
  const messages = await waiting;
  assert.deepEqual(
    messages.map((m) => [m.rcptTo[0], m.user, m.secure]),
    [
      ['once@y.test', 'u', true],
      ['two@y.test', 'u', true],
    ],
  );
  sink.clearRules();
  await send(sink.port, 'bounce@any.test', auth);
  assert.equal(sink.accepted, 3);
});
