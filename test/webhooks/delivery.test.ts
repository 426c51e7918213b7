// Delivery end to end, against real HTTP receivers on loopback (ALLOW_PRIVATE_URLS on):
// signed batches the SDK check accepts, batches of at most 100 in order with one request in
// flight, retries on the schedule (time moved with shiftClock, no sleeping), 3xx as failure,
// disabled webhooks, filters, requests and resend, the test endpoint and its rate limit.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, eventually, type TestApp } from '../helpers/app.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { emitEvent, type EmittedEvent } from '../../src/platform/events.ts';
import { resetClock, shiftClock } from '../../src/platform/clock.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { retryDelayMs } from '../../src/resources/webhooks/policy.ts';
import { pruneWebhookRequests, WebhookDispatcher } from '../../src/resources/webhooks/dispatcher.ts';
import { checkEventPayload } from '../../src/resources/events/payloads.ts';
import { verifyLikeSdk } from './sdk-verifier.ts';

let app: TestApp;
let dns: TestDnsServer;
const receivers: WebhookReceiver[] = [];

before(async () => {
  dns = await startDnsServer();
  dns.set('receiver.test', 'A', ['127.0.0.1']);
  app = await startTestApp({
    env: { DNS_SERVERS: dns.address, ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_MS: '50' },
    workspace: { plan: 'business' },
  });
});
after(async () => {
  resetClock();
  for (const r of receivers) await r.close();
  await app?.close();
  await dns?.close();
});
afterEach(() => resetClock());

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

function emit(type: string, object: Record<string, unknown>, workspaceId = app.workspace.id): Promise<EmittedEvent> {
  return app.running.ctx.db.transaction().execute((tx) => emitEvent(tx, workspaceId, type, object));
}

function emailObject(n: number, extra: Record<string, unknown> = {}) {
  return {
    id: `em_${String(n).padStart(27, '0')}`,
    object: 'email',
    from: 'hello@acme.com',
    to: `user${n}@example.com`,
    subject: `Message ${n}`,
    status: 'delivered',
    meta: null,
    ...extra,
  };
}

async function createHook(body: Record<string, unknown>, api = app.api) {
  const response = await api.post('/v2/webhooks', body);
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as { id: string; secret: string; name: string };
}

async function requestsOf(hookId: string, query = '') {
  const response = await app.api.get(`/v2/webhooks/${hookId}/requests?limit=100${query}`);
  assert.equal(response.status, 200);
  return response.body.data as any[];
}

function item(event: EmittedEvent) {
  return { event_id: event.id, type: event.type, object: event.object, data: { object: event.object } };
}

test('signed batches reach the endpoint through its hostname; the SDK check accepts them', async () => {
  const r = await receiver();
  const hook = await createHook({ name: 'signed', url: `http://receiver.test:${r.port}/hooks/emailit?src=postlane`, all_events: true });
  const events = [
    await emit('email.accepted', emailObject(1)),
    await emit('email.delivered', emailObject(1, { meta: { order: 'A-1' } })),
    await emit('suppression.created', {
      id: 'sup_1',
      object: 'suppression',
      email: 'x@example.com',
      type: 'recipient',
      reason: null,
      created_at: '2026-01-01T00:00:00.000000Z',
      keep_until: null,
    }),
  ];
  await eventually(async () => r.items().length >= 3);
  assert.deepEqual(r.items(), events.map(item));
  for (const request of r.requests) {
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/hooks/emailit?src=postlane');
    assert.equal(request.headers.host, `receiver.test:${r.port}`);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['user-agent'], 'Emailit-Webhooks/2.0');
    assert.match(String(request.headers['x-emailit-timestamp']), /^\d{10}$/);
    assert.ok(Math.abs(Number(request.headers['x-emailit-timestamp']) - Date.now() / 1000) < 60);
    assert.match(String(request.headers['x-emailit-signature']), /^[0-9a-f]{64}$/);
    assert.equal(request.body, JSON.stringify(JSON.parse(request.body)), 'compact JSON');
    const verified = verifyLikeSdk(
      request.body,
      request.headers['x-emailit-signature'] as string,
      request.headers['x-emailit-timestamp'] as string,
      hook.secret,
    );
    assert.deepEqual(verified, request.json);
  }

  const delivered = await eventually(async () => {
    const list = await requestsOf(hook.id);
    return list.length > 0 && list.every((w) => w.status === 'delivered') ? list : null;
  });
  const received = delivered.flatMap((w) => w.event_ids).sort();
  assert.deepEqual(received, events.map((e) => e.id).sort());
  const first = delivered[delivered.length - 1];
  assert.match(first.id, /^whr_[A-Za-z0-9]{27}$/);
  assert.deepEqual(
    {
      ...first,
      id: undefined,
      event_ids: undefined,
      event_count: undefined,
      duration_ms: undefined,
      last_attempt_at: undefined,
      delivered_at: undefined,
      created_at: undefined,
      updated_at: undefined,
    },
    {
      object: 'webhook_request',
      id: undefined,
      webhook_id: hook.id,
      status: 'delivered',
      attempts: 1,
      max_attempts: 11,
      event_ids: undefined,
      event_count: undefined,
      response_status: 200,
      response_body: 'ok',
      duration_ms: undefined,
      error: null,
      next_attempt_at: null,
      last_attempt_at: undefined,
      delivered_at: undefined,
      created_at: undefined,
      updated_at: undefined,
    },
  );
  const detail = (await app.api.get(`/v2/webhooks/${hook.id}/requests/${first.id}`)).body;
  assert.equal(detail.attempt_history.length, 1);
  assert.deepEqual(
    { ...detail.attempt_history[0], duration_ms: 0, created_at: '' },
    { attempt: 1, manual: false, response_status: 200, response_body: 'ok', duration_ms: 0, error: null, created_at: '' },
  );
  assert.deepEqual(
    detail.payload.map((i: any) => i.event_id),
    first.event_ids,
  );

  const webhook = (await app.api.get(`/v2/webhooks/${hook.id}`)).body;
  assert.ok(webhook.last_used_at && webhook.last_used_at >= first.created_at, 'last_used_at set on success');
});

test('batches of at most 100, oldest first, one request in flight per webhook', async () => {
  const r = await receiver();
  r.setDefault({ status: 200, body: 'ok', delayMs: 25 });
  const hook = await createHook({ name: 'batched', url: `${r.url}/batches`, events: ['email.delivered'] });
  const emitted = await app.running.ctx.db.transaction().execute(async (tx) => {
    const out: EmittedEvent[] = [];
    for (let i = 0; i < 250; i++) out.push(await emitEvent(tx, app.workspace.id, 'email.delivered', emailObject(i, { n: i })));
    await emitEvent(tx, app.workspace.id, 'email.bounced', emailObject(999)); // not subscribed
    return out;
  });
  await eventually(async () => r.items().length >= 250, 15_000);
  assert.deepEqual(
    r.requests.map((q) => q.json.length),
    [100, 100, 50],
  );
  assert.deepEqual(
    r.items().map((i) => i.event_id),
    emitted.map((e) => e.id),
  );
  assert.equal(r.maxConcurrent(), 1);
  // A second burst while the first is being sent still goes out one request at a time.
  for (let i = 0; i < 30; i++) await emit('email.delivered', emailObject(1000 + i));
  await eventually(async () => r.items().length >= 280, 15_000);
  assert.equal(r.maxConcurrent(), 1);
  assert.ok(r.requests.every((q) => q.json.length <= 100));
  assert.equal(new Set(r.items().map((i) => i.event_id)).size, 280, 'each event once');
});

test('a 500 then a 200: retried 5 minutes later with the same events, nothing lost', async () => {
  const r = await receiver();
  r.queue({ status: 500, body: 'boom' });
  const hook = await createHook({ name: 'flaky', url: `${r.url}/flaky`, all_events: true });
  const first = await emit('email.delivered', emailObject(1));

  const [failed] = await eventually(async () => {
    const list = await requestsOf(hook.id);
    return list.length === 1 && list[0].status === 'retrying' ? list : null;
  });
  assert.deepEqual([failed.attempts, failed.response_status, failed.response_body, failed.error], [1, 500, 'boom', 'HTTP 500']);
  assert.equal(Date.parse(failed.next_attempt_at) - Date.parse(failed.last_attempt_at), 5 * 60_000);
  assert.equal((await app.api.get(`/v2/webhooks/${hook.id}`)).body.last_used_at, null);

  // New events keep flowing (after a short pause) while the failed batch waits for its retry.
  const second = await emit('email.delivered', emailObject(2));
  await eventually(async () => r.requests.length >= 2);
  assert.deepEqual(
    r.requests[1].json.map((i: any) => i.event_id),
    [second.id],
  );

  shiftClock(5 * 60_000 + 1000);
  await eventually(async () => (await requestsOf(hook.id, '&status.exact=delivered')).length === 2);
  assert.equal(r.requests.length, 3);
  assert.equal(r.requests[2].body, r.requests[0].body, 'the retry carries the same batch, same event ids');
  assert.deepEqual(
    r.requests[2].json.map((i: any) => i.event_id),
    [first.id],
  );
  const detail = (await app.api.get(`/v2/webhooks/${hook.id}/requests/${failed.id}`)).body;
  assert.deepEqual(
    detail.attempt_history.map((a: any) => a.response_status),
    [500, 200],
  );
  assert.deepEqual([detail.status, detail.attempts, detail.next_attempt_at, detail.error], ['delivered', 2, null, null]);
  const okItems = r.requests.filter((_, i) => i > 0).flatMap((q) => q.json.map((x: any) => x.event_id));
  assert.deepEqual(okItems.sort(), [first.id, second.id].sort());
});

test('a 302 counts as a failure and the redirect is not followed', async () => {
  const r = await receiver();
  r.queue({ status: 302, headers: { location: `${r.url}/elsewhere` } });
  const hook = await createHook({ name: 'redirecting', url: `${r.url}/moved`, all_events: true });
  await emit('email.delivered', emailObject(3));
  const [request] = await eventually(async () => {
    const list = await requestsOf(hook.id);
    return list[0]?.status === 'retrying' ? list : null;
  });
  assert.deepEqual([request.response_status, request.error], [302, 'Redirect (HTTP 302) not followed']);
  assert.equal(r.on('/elsewhere').length, 0);
  assert.equal(r.requests.length, 1);
});

test('an answer with NUL characters is stored without them', async () => {
  const r = await receiver();
  r.queue({ status: 400, body: 'bad\u0000request' });
  const hook = await createHook({ name: 'nul answer', url: `${r.url}/nul`, all_events: true });
  await emit('email.delivered', emailObject(4));
  const [request] = await eventually(async () => {
    const list = await requestsOf(hook.id);
    return list[0]?.status === 'retrying' ? list : null;
  });
  assert.deepEqual([request.response_status, request.response_body, request.error], [400, 'badrequest', 'HTTP 400']);
  await app.api.delete(`/v2/webhooks/${hook.id}`);
});

test('a disabled webhook receives nothing, and events from while it was disabled are never sent', async () => {
  const r = await receiver();
  const off = await createHook({ name: 'off', url: `${r.url}/off`, all_events: true, enabled: false });
  const on = await createHook({ name: 'on', url: `${r.url}/on`, all_events: true });
  const during = await emit('email.delivered', emailObject(10));
  await eventually(async () => r.on('/on').length >= 1);
  const queued = await app.running.ctx.db.selectFrom('webhook_outbox').select('id').where('webhook_id', '=', off.id).execute();
  assert.equal(queued.length, 0, 'nothing was queued for the disabled webhook');
  assert.equal((await requestsOf(off.id)).length, 0);

  assert.equal((await app.api.post(`/v2/webhooks/${off.id}`, { enabled: true })).status, 200);
  const after = await emit('email.delivered', emailObject(11));
  await eventually(async () => r.on('/off').length >= 1);
  assert.deepEqual(
    r.on('/off').flatMap((q) => q.json.map((i: any) => i.event_id)),
    [after.id],
  );
  assert.ok(!r.on('/off').some((q) => q.body.includes(during.id)));
  await app.api.post(`/v2/webhooks/${on.id}`, { enabled: false });
});

test('disabling a webhook fails what waits for a retry', async () => {
  const r = await receiver();
  r.setDefault({ status: 503 });
  const hook = await createHook({ name: 'to disable', url: `${r.url}/x`, all_events: true });
  await emit('email.delivered', emailObject(12));
  await eventually(async () => (await requestsOf(hook.id))[0]?.status === 'retrying');
  await app.api.post(`/v2/webhooks/${hook.id}`, { enabled: false });
  const [request] = await requestsOf(hook.id);
  assert.deepEqual([request.status, request.next_attempt_at, request.error], ['failed', null, 'Webhook was disabled']);
  await app.api.delete(`/v2/webhooks/${hook.id}`);
});

test('filters decide which events are sent; Pay as you go ignores existing filters', async () => {
  const r = await receiver();
  const all = await createHook({
    name: 'filter all',
    url: `${r.url}/all`,
    events: ['email.delivered'],
    filter: {
      rules: [
        { field: 'payload.to', operator: 'ends_with', value: '@example.com' },
        { field: 'meta.plan', operator: 'in', value: ['pro', 'business'] },
      ],
    },
  });
  const any = await createHook({
    name: 'filter any',
    url: `${r.url}/any`,
    all_events: true,
    filter: {
      match: 'any',
      rules: [
        { field: 'meta.seats', operator: 'greater_than', value: 10 },
        { field: 'subject', operator: 'contains', value: 'urgent' },
      ],
    },
  });
  const a = await emit('email.delivered', emailObject(20, { to: 'a@example.com', meta: { plan: 'pro', seats: 3 } }));
  const b = await emit('email.delivered', emailObject(21, { to: 'b@other.net', meta: { plan: 'pro', seats: 50 } }));
  const c = await emit('email.delivered', emailObject(22, { to: 'c@example.com', meta: { plan: 'free' }, subject: 'URGENT: reply' }));
  await emit('email.bounced', emailObject(23, { to: 'd@example.com', meta: { plan: 'pro' } }));
  const e = await emit('email.delivered', emailObject(24, { to: 'e@EXAMPLE.COM', meta: { plan: 'business' } }));

  await eventually(async () => r.on('/all').flatMap((q) => q.json).length >= 2 && r.on('/any').flatMap((q) => q.json).length >= 2);
  assert.deepEqual(
    r.on('/all').flatMap((q) => q.json.map((i: any) => i.event_id)),
    [a.id, e.id],
  );
  assert.deepEqual(
    r.on('/any').flatMap((q) => q.json.map((i: any) => i.event_id)),
    [b.id, c.id],
  );
  // Only those were ever queued for them.
  for (const [hook, expected] of [
    [all, 2],
    [any, 2],
  ] as const) {
    const requests = await requestsOf(hook.id);
    const outbox = await app.running.ctx.db.selectFrom('webhook_outbox').select('id').where('webhook_id', '=', hook.id).execute();
    assert.equal(requests.reduce((n, q) => n + q.event_count, 0) + outbox.length, expected);
  }
  await app.api.delete(`/v2/webhooks/${all.id}`);
  await app.api.delete(`/v2/webhooks/${any.id}`);

  // A workspace that moves down to Pay as you go keeps its filter, but it no longer applies.
  const other = await app.newWorkspace({ plan: 'pro' });
  await createHook(
    {
      name: 'was filtered',
      url: `${r.url}/downgraded`,
      all_events: true,
      filter: { rules: [{ field: 'to', operator: 'equals', value: 'vip@example.com' }] },
    },
    other.api,
  );
  await updateWorkspace(app.running.ctx.db, other.workspace.id, { plan: 'payg' });
  const unfiltered = await emit('email.delivered', emailObject(25, { to: 'someone@example.com' }), other.workspace.id);
  await eventually(async () => r.on('/downgraded').length >= 1);
  assert.deepEqual(
    r.on('/downgraded')[0].json.map((i: any) => i.event_id),
    [unfiltered.id],
  );
});

test('11 attempts on the schedule, then failed; 3 days without success disable the webhook', async () => {
  const r = await receiver();
  r.setDefault({ status: 500, body: 'down' });
  const hook = await createHook({ name: 'dead endpoint', url: `${r.url}/dead`, all_events: true });
  await emit('email.delivered', emailObject(30));
  const attemptsOf = async () => (await requestsOf(hook.id))[0]?.attempts ?? 0;
  await eventually(async () => (await attemptsOf()) === 1);
  for (let n = 2; n <= 11; n++) {
    const [before] = await requestsOf(hook.id);
    assert.equal(Date.parse(before.next_attempt_at) - Date.parse(before.last_attempt_at), retryDelayMs(n - 1), `wait before attempt ${n}`);
    shiftClock(retryDelayMs(n - 1)! + 1000);
    await eventually(async () => (await attemptsOf()) === n);
  }
  const [request] = await requestsOf(hook.id);
  assert.deepEqual([request.status, request.attempts, request.next_attempt_at], ['failed', 11, null]);
  assert.equal(r.requests.length, 11);
  const webhook = (await app.api.get(`/v2/webhooks/${hook.id}`)).body;
  assert.equal(webhook.enabled, false, 'disabled after 3 days without a success');

  // While disabled: nothing is queued, nothing is sent.
  await emit('email.delivered', emailObject(31));
  const queued = await app.running.ctx.db.selectFrom('webhook_outbox').select('id').where('webhook_id', '=', hook.id).execute();
  assert.equal(queued.length, 0);
  assert.equal((await requestsOf(hook.id)).length, 1);

  // Resend by hand: refused while disabled; after enabling, one more attempt (failed again).
  const refused = await app.api.post(`/v2/webhooks/${hook.id}/requests/${request.id}/resend`);
  assert.deepEqual([refused.status, refused.body], [422, { error: 'The webhook is disabled; enable it before resending requests' }]);
  await app.api.post(`/v2/webhooks/${hook.id}`, { enabled: true });
  const resent = await app.api.post(`/v2/webhooks/${hook.id}/requests/${request.id}/resend`);
  assert.equal(resent.status, 200);
  assert.equal(resent.body.status, 'pending');
  await eventually(async () => (await attemptsOf()) === 12);
  const detail = (await app.api.get(`/v2/webhooks/${hook.id}/requests/${request.id}`)).body;
  assert.equal(detail.status, 'failed');
  assert.equal(detail.attempt_history.length, 12);
  assert.deepEqual([detail.attempt_history[11].manual, detail.attempt_history[10].manual], [true, false]);
  assert.ok(detail.attempt_history.every((a: any) => a.response_status === 500));
});

test('resend: a delivered request goes again; 7-day window; 404 and 409', async () => {
  const r = await receiver();
  const hook = await createHook({ name: 'resendable', url: `${r.url}/again`, all_events: true });
  await emit('email.delivered', emailObject(40));
  const [request] = await eventually(async () => {
    const list = await requestsOf(hook.id);
    return list[0]?.status === 'delivered' ? list : null;
  });
  const resent = await app.api.post(`/v2/webhooks/${hook.id}/requests/${request.id}/resend`);
  assert.deepEqual([resent.status, resent.body.id, resent.body.status], [200, request.id, 'pending']);
  await eventually(async () => r.requests.length === 2);
  assert.equal(r.requests[1].body, r.requests[0].body);
  const again = await eventually(async () => {
    const [row] = await requestsOf(hook.id);
    return row.status === 'delivered' && row.attempts === 2 ? row : null;
  });
  assert.equal(again.response_status, 200);

  const missing = await app.api.post(`/v2/webhooks/${hook.id}/requests/whr_000000000000000000000000000/resend`);
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Webhook request not found' }]);
  assert.equal((await app.api.get(`/v2/webhooks/${hook.id}/requests/nope`)).status, 404);

  // Held by another worker's lease: a queued request is not queued twice.
  const db = app.running.ctx.db;
  await db
    .updateTable('webhooks')
    .set({ lock_until: Date.now() + 3_600_000, lock_owner: 'elsewhere' })
    .where('id', '=', hook.id)
    .execute();
  await app.api.post(`/v2/webhooks/${hook.id}/requests/${request.id}/resend`);
  const busy = await app.api.post(`/v2/webhooks/${hook.id}/requests/${request.id}/resend`);
  assert.deepEqual([busy.status, busy.body], [409, { error: 'The webhook request is already queued for delivery' }]);
  await db.updateTable('webhooks').set({ lock_until: null, lock_owner: null }).where('id', '=', hook.id).execute();
  await eventually(async () => r.requests.length === 3);

  const eightDaysAgo = new Date(Date.now() - 8 * 24 * 3_600_000).toISOString().replace('Z', '000Z');
  await db.updateTable('webhook_requests').set({ created_at: eightDaysAgo }).where('id', '=', request.id).execute();
  const old = await app.api.post(`/v2/webhooks/${hook.id}/requests/${request.id}/resend`);
  assert.deepEqual([old.status, old.body], [422, { error: 'Webhook requests can be resent only within 7 days of their creation' }]);
});

test('deleting a webhook drops its pending deliveries', async () => {
  const r = await receiver();
  r.setDefault({ status: 500 });
  const hook = await createHook({ name: 'doomed', url: `${r.url}/doomed`, all_events: true });
  await emit('email.delivered', emailObject(50));
  await eventually(async () => (await requestsOf(hook.id))[0]?.status === 'retrying');
  await emit('email.delivered', emailObject(51));
  await app.api.delete(`/v2/webhooks/${hook.id}`);
  const db = app.running.ctx.db;
  const left = await Promise.all([
    db.selectFrom('webhook_outbox').select('id').where('webhook_id', '=', hook.id).execute(),
    db.selectFrom('webhook_requests').select('id').where('webhook_id', '=', hook.id).execute(),
  ]);
  assert.deepEqual(
    left.map((rows) => rows.length),
    [0, 0],
  );
  assert.equal((await app.api.get(`/v2/webhooks/${hook.id}/requests`)).status, 404);
});

test("test delivery: a signed sample of the type, the endpoint's answer, 5 per minute per IP", async () => {
  const r = await receiver();
  const hook = await createHook({ name: 'tested', url: `${r.url}/test`, events: [] });

  const ok = await app.api.post(`/v2/webhooks/${hook.id}/test`, { type: 'email.delivered' });
  assert.equal(ok.status, 200);
  assert.match(ok.body.event_id, /^evt_/);
  assert.equal(typeof ok.body.duration_ms, 'number');
  assert.deepEqual(
    { ...ok.body, event_id: '', duration_ms: 0 },
    {
      object: 'webhook_test',
      webhook_id: hook.id,
      event_id: '',
      type: 'email.delivered',
      success: true,
      status_code: 200,
      response_body: 'ok',
      duration_ms: 0,
      error: null,
    },
  );
  const [sent] = r.requests;
  verifyLikeSdk(sent.body, sent.headers['x-emailit-signature'] as string, sent.headers['x-emailit-timestamp'] as string, hook.secret);
  assert.equal(sent.json.length, 1);
  assert.equal(sent.json[0].event_id, ok.body.event_id);
  assert.equal(sent.json[0].type, 'email.delivered');
  assert.deepEqual(sent.json[0].data.object, sent.json[0].object);
  assert.deepEqual(checkEventPayload('email.delivered', sent.json[0].object), []);

  const custom = await app.api.post(`/v2/webhooks/${hook.name}/test`, { type: 'c:order.completed' });
  assert.deepEqual([custom.body.success, r.requests[1].json[0].type], [true, 'c:order.completed']);

  r.queue({ status: 500, body: 'nope' });
  const failing = await app.api.post(`/v2/webhooks/${hook.id}/test`, { type: 'contact.created' });
  assert.deepEqual(
    [failing.status, failing.body.success, failing.body.status_code, failing.body.response_body, failing.body.error],
    [200, false, 500, 'nope', 'HTTP 500'],
  );

  const unknown = await app.api.post(`/v2/webhooks/${hook.id}/test`, { type: 'email.nonsense' });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error, 'Unknown event type "email.nonsense"');

  const defaulted = await app.api.post(`/v2/webhooks/${hook.id}/test`);
  assert.deepEqual([defaulted.status, defaulted.body.type], [200, 'email.delivered']);

  const limited = await app.api.post(`/v2/webhooks/${hook.id}/test`, { type: 'email.delivered' });
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  assert.deepEqual(
    { ...limited.body, retry_after: 0 },
    { error: 'Rate limit exceeded', message: 'Too many webhook tests: at most 5 per minute', limit: 5, current: 5, retry_after: 0 },
  );
  assert.equal(r.requests.length, 4, 'the refused test sent nothing');
  assert.deepEqual(await requestsOf(hook.id), [], 'tests are not stored as webhook requests');
});

test('several workers: still one request in flight per webhook and each event sent once', async () => {
  const r = await receiver();
  r.setDefault({ status: 200, body: 'ok', delayMs: 15 });
  // Two more dispatchers (as other worker processes would be) compete for the same webhooks.
  const others = [new WebhookDispatcher(app.running.ctx, { pollMs: 5 }), new WebhookDispatcher(app.running.ctx, { pollMs: 5 })];
  for (const d of others) d.start();
  try {
    const hooks = [
      await createHook({ name: 'shared 1', url: `${r.url}/s1`, all_events: true }),
      await createHook({ name: 'shared 2', url: `${r.url}/s2`, all_events: true }),
    ];
    const emitted: string[] = [];
    for (let round = 0; round < 6; round++) {
      await app.running.ctx.db.transaction().execute(async (tx) => {
        for (let i = 0; i < 60; i++)
          emitted.push((await emitEvent(tx, app.workspace.id, 'email.delivered', emailObject(round * 100 + i))).id);
      });
    }
    await eventually(
      async () => r.on('/s1').flatMap((q) => q.json).length >= 360 && r.on('/s2').flatMap((q) => q.json).length >= 360,
      20_000,
    );
    for (const path of ['/s1', '/s2']) {
      const ids = r.on(path).flatMap((q) => q.json.map((i: any) => i.event_id));
      assert.deepEqual(ids, emitted, `${path}: every event once, in order`);
    }
    // At most one open request per webhook means at most two at once here.
    assert.ok(r.maxConcurrent() <= hooks.length, `max concurrent ${r.maxConcurrent()}`);
    for (const hook of hooks) await app.api.delete(`/v2/webhooks/${hook.id}`);
  } finally {
    for (const d of others) await d.stop();
  }
});

test('maintenance drops queued rows of webhooks that are gone or disabled', async () => {
  const db = app.running.ctx.db;
  const hook = await createHook({ name: 'kept', url: 'http://127.0.0.1:9/never', all_events: true, enabled: false });
  await db
    .insertInto('webhook_outbox')
    .values([
      { webhook_id: 'wh_000000000000000000000000000', event_id: 'evt_x', created_at: '2026-01-01T00:00:00.000000Z' },
      { webhook_id: hook.id, event_id: 'evt_y', created_at: '2026-01-01T00:00:00.000000Z' },
    ])
    .execute();
  await pruneWebhookRequests(db);
  const left = await db.selectFrom('webhook_outbox').select('webhook_id').where('event_id', 'in', ['evt_x', 'evt_y']).execute();
  assert.deepEqual(left, []);
  await app.api.delete(`/v2/webhooks/${hook.id}`);
});
