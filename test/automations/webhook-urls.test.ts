// A `call_webhook` step's URL meets the webhooks' URL guard (ALLOW_PRIVATE_URLS off here):
// refused when the automation is created, updated or started if its host is, or resolves to,
// a loopback, private or link-local address, and checked again when the step runs (DNS can
// change between the start and a run).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { eventually } from '../helpers/app.ts';
import { manualGraph } from './helpers.ts';

let app: SendingApp;
let hooks: WebhookReceiver;
before(async () => {
  app = await startSendingApp({ env: { ALLOW_PRIVATE_URLS: 'false' } });
  hooks = await startWebhookReceiver();
  app.dns.set('inside.test', 'A', ['127.0.0.1']);
  app.dns.set('outside.test', 'A', ['93.184.216.34']);
});
after(async () => {
  await hooks?.close();
  await app?.close();
});

const hookGraph = (url: string) => manualGraph([{ key: 'ping', type: 'action', action: 'call_webhook', config: { url } }], []);
const hookPort = () => new URL(hooks.url).port;

test('creating or updating an automation whose call_webhook URL reaches a private address is refused, naming the step', async () => {
  const refusals: Array<[string, string]> = [
    [`http://inside.test:${hookPort()}/hook`, 'The hostname inside.test resolves to 127.0.0.1, which is not a public address'],
    ['http://169.254.169.254/latest/meta-data/', 'The address 169.254.169.254 is not a public address'],
    ['http://[::1]:8080/x', 'The address ::1 is not a public address'],
    ['https://10.1.2.3/runs/{{run.id}}', 'The address 10.1.2.3 is not a public address'],
    ['http://localhost/x', 'The hostname localhost is not a public host'],
  ];
  for (const [url, reason] of refusals) {
    const created = await app.api.post('/v2/automations', hookGraph(url));
    assert.equal(created.status, 400, `${url}: ${created.text}`);
    assert.deepEqual(
      created.body,
      { message: 'Validation failed', errors: { 'steps.1.config.url': [`The url of step "ping" is refused: ${reason}`] } },
      url,
    );
  }
  assert.equal((await app.api.get('/v2/automations')).body.data.length, 0, 'nothing was created');

  const draft = await app.api.post('/v2/automations', hookGraph('https://outside.test/hook/{{run.id}}'));
  assert.equal(draft.status, 201, draft.text);
  const id = draft.body.data.id;
  const updated = await app.api.post(`/v2/automations/${id}`, hookGraph(`http://inside.test:${hookPort()}/hook`));
  assert.equal(updated.status, 400, updated.text);
  assert.deepEqual(updated.body.errors, {
    'steps.1.config.url': [
      'The url of step "ping" is refused: The hostname inside.test resolves to 127.0.0.1, which is not a public address',
    ],
  });
  const kept = (await app.api.get(`/v2/automations/${id}`)).body.data;
  assert.equal(kept.steps[1].config.url, 'https://outside.test/hook/{{run.id}}', 'the update changed nothing');
  // A host made by a placeholder is known only when the step runs, and checked then.
  assert.equal((await app.api.post(`/v2/automations/${id}`, hookGraph('https://{{payload.host}}/hook'))).status, 200);
  await app.api.delete(`/v2/automations/${id}`);
});

test('starting refuses a call_webhook URL whose host has come to resolve to a private address', async () => {
  app.dns.set('moving.test', 'A', ['93.184.216.34']);
  const draft = await app.api.post('/v2/automations', hookGraph(`http://moving.test:${hookPort()}/start`));
  assert.equal(draft.status, 201, draft.text);
  app.dns.set('moving.test', 'A', ['127.0.0.1']);
  const started = await app.api.post(`/v2/automations/${draft.body.data.id}/start`);
  assert.equal(started.status, 400, started.text);
  assert.deepEqual(started.body, {
    message: 'Validation failed',
    errors: {
      'steps.1.config.url': [
        'The url of step "ping" is refused: The hostname moving.test resolves to 127.0.0.1, which is not a public address',
      ],
    },
  });
  assert.equal((await app.api.get(`/v2/automations/${draft.body.data.id}`)).body.data.status, 'draft');
});

test('a run checks the URL again: a host that turned private after the start fails the step without a request', async () => {
  app.dns.set('later.test', 'A', ['93.184.216.34']);
  const draft = await app.api.post('/v2/automations', hookGraph(`http://later.test:${hookPort()}/run`));
  assert.equal(draft.status, 201, draft.text);
  const id = draft.body.data.id;
  assert.equal((await app.api.post(`/v2/automations/${id}/start`)).status, 200);
  app.dns.set('later.test', 'A', ['127.0.0.1']);
  const triggered = await app.api.post(`/v2/automations/${id}/trigger`, { payload: {} });
  assert.equal(triggered.status, 201, triggered.text);
  const run = await eventually(async () => {
    const current = (await app.api.get(`/v2/automations/${id}/runs/${triggered.body.data.id}`)).body.data;
    return current.status !== 'running' && current;
  });
  assert.equal(run.status, 'failed');
  assert.match(run.run_steps[0].data.error, /^The webhook URL was refused: The hostname later\.test resolves to 127\.0\.0\.1/);
  assert.equal(hooks.requests.length, 0, 'no request reached the loopback receiver');
});
