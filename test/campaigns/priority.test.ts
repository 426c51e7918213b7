// Transactional before bulk: campaign deliveries are their own job type with their own worker
// share, so while a campaign's deliveries all hang on a slow receiver, an API email is still
// delivered at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStallingMta, type StallingMta } from '../helpers/stalling-mta.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { eventually } from '../helpers/app.ts';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { audience, CONTENT, report } from './helpers.ts';
import { seedAudience } from './seed.ts';

let app: SendingApp;
let mta: StallingMta;
let sink: SmtpSink;

before(async () => {
  mta = await startStallingMta(); // 127.0.0.1: the campaign's recipients (example.org)
  sink = await startSmtpSink({ rules: [], host: '127.0.0.2', port: mta.port }); // example.net
  app = await startSendingApp({ env: { MX_PORT: String(mta.port) } });
  await app.verifiedDomain('acme.test');
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1000 });
  app.dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  app.dns.set('mx.example.org', 'A', ['127.0.0.1']);
  app.dns.set('example.net', 'MX', [{ exchange: 'mx.example.net', priority: 10 }]);
  app.dns.set('mx.example.net', 'A', ['127.0.0.2']);
});
after(async () => {
  mta.release();
  await app.close();
  await sink.close();
  await mta.close();
});

test('an API email is delivered while every campaign delivery hangs on a slow receiver', { timeout: 60_000 }, async () => {
  const api = app.api;
  const list = await audience(api, 'Many');
  await seedAudience(app.running.ctx.db, app.workspace.id, list, 200, 'slow');
  const created = await api.post('/v2/campaigns', { name: 'Slow', from_email: 'news@acme.test', ...CONTENT });
  await api.post(`/v2/campaigns/${created.body.id}`, { recipients: [{ audience_id: list }] });
  assert.equal((await api.post(`/v2/campaigns/${created.body.id}/send`)).status, 200);
  await eventually(async () => (await report(api, created.body.id)).sent === 200, 20_000);
  await eventually(async () => mta.received >= 20, 20_000); // the receiver holds them all

  const started = Date.now();
  const res = await api.post('/v2/emails', {
    from: 'Acme <hello@acme.test>',
    to: 'reset@example.net',
    subject: 'Your code',
    text: '123456',
  });
  assert.equal(res.status, 200, res.text);
  await sink.waitForMessages(1, 10_000);
  const took = Date.now() - started;
  assert.ok(took < 5000, `delivered in ${took} ms`);
  assert.equal(mta.accepted.length, 0, 'no campaign delivery has finished meanwhile');

  mta.release();
  await eventually(async () => (await report(api, created.body.id)).delivered === 200, 30_000, 200);
});
