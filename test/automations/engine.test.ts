// The automation engine end to end over HTTP, with real mail at an SMTP sink and a real webhook
// receiver: triggers from the event log, actions, settings enforced under concurrency, waits on
// the clock seam, stop, costs, and step statistics with the send_email funnel.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { eventually } from '../helpers/app.ts';
import { resetClock, shiftClock } from '../../src/platform/clock.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { fireDateTriggers } from '../../src/resources/automations/dates.ts';
import { allRuns, manualGraph, settledRuns, startedAutomation } from './helpers.ts';

let app: DeliveryApp;
let hooks: WebhookReceiver;
let audienceId: string;

before(async () => {
  app = await startDeliveryApp({ workspace: { credits: 1_000_000 } });
  hooks = await startWebhookReceiver();
  app.sink.addRule({ match: 'bounce', reply: { code: 550, message: '5.1.1 <bounce>: Recipient address rejected: User unknown' } });
  app.dns.set('example.net', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  app.dns.set('example.com', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 100_000, dailyLimit: 10_000_000 });
  const template = await app.api.post('/v2/templates', {
    name: 'Welcome',
    alias: 'welcome',
    from: 'Acme <hello@acme.test>',
    subject: 'Welcome {{first_name}}',
    html: '<p>Hello {{first_name}} from {{cf.city|"nowhere"}}, <a href="https://shop.example.com/">shop</a></p>',
    text: 'Hello {{first_name}}',
  });
  assert.equal(template.status, 201, template.text);
  audienceId = (await app.api.post('/v2/audiences', { name: 'Newsletter' })).body.id;
});
after(async () => {
  resetClock();
  await hooks?.close();
  await app?.close();
});

const db = () => app.running.ctx.db;

/** Opens (the pixel) or clicks (the first link) the message the sink got for `to`, as a reader would. */
async function link(to: string, kind: 'open' | 'click') {
  const message = app.sink.messages.find((m) => m.rcptTo.includes(to))!;
  const html = String((await app.parse(message.raw)).html);
  const match = kind === 'open' ? /src="(http:\/\/[^"]+\/o\/[^"]+)"/.exec(html) : /href="(http:\/\/[^"]+\/c\/[^"]+)"/.exec(html);
  assert.ok(match, `${kind} link in ${html}`);
  const url = new URL(match[1]);
  const target = new URL(app.url);
  await new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: url.pathname, headers: { host: url.host, 'user-agent': 'Reader/1.0' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve());
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('a contact added to an audience runs condition → send_email → wait → call_webhook to completion', async () => {
  const automation = await startedAutomation(app.api, {
    context: 'contact',
    name: 'Welcome',
    steps: [
      { key: 'joined', type: 'trigger', trigger: 'contact.added_to_audience', config: { audience_id: audienceId } },
      {
        key: 'has_name',
        type: 'action',
        action: 'condition',
        config: { filter: { rules: [{ field: 'first_name', operator: 'is_set' }] } },
      },
      { key: 'mail', type: 'action', action: 'send_email', config: { type: 'template', template_id: 'welcome' } },
      { key: 'later', type: 'action', action: 'wait', config: { seconds: 3600 } },
      {
        key: 'notify',
        type: 'action',
        action: 'call_webhook',
        config: {
          url: `${hooks.url}/welcome/{{contact.id}}`,
          headers: { 'x-run': '{{run.id}}' },
          body: { email: '{{contact.email}}', source: '{{meta.source_event_id}}', audience: '{{payload.object.audience.name}}' },
        },
      },
      { key: 'skip', type: 'action', action: 'end' },
    ],
    connections: [
      { from: 'joined', to: 'has_name' },
      { from: 'has_name', to: 'mail', branch: 'yes' },
      { from: 'has_name', to: 'skip', branch: 'no' },
      { from: 'mail', to: 'later' },
      { from: 'later', to: 'notify' },
    ],
  });
  const before = (await app.api.get(`/v2/automations/${automation.id}`)).body.data;
  const contact = await app.api.post('/v2/contacts', { email: 'ada@example.org', first_name: 'Ada', audiences: [audienceId] });
  assert.equal(contact.status, 201, contact.text);
  const nameless = await app.api.post('/v2/contacts', { email: 'anon@example.org', audiences: [audienceId] });
  assert.equal(nameless.status, 201);
  // Another audience does not fire the trigger.
  const other = (await app.api.post('/v2/audiences', { name: 'Other' })).body.id;
  await app.api.post('/v2/contacts', { email: 'elsewhere@example.org', first_name: 'E', audiences: [other] });

  const waiting = await eventually(async () => {
    const runs = await allRuns(app.api, automation.id);
    const ada = runs.find((r) => r.contact_id === contact.body.id);
    const anon = runs.find((r) => r.contact_id === nameless.body.id);
    return runs.length === 2 && ada?.run_steps.some((s: any) => s.status === 'waiting') && anon?.status === 'completed' && runs;
  }, 10_000);
  const ada = waiting.find((r: any) => r.contact_id === contact.body.id);
  const anon = waiting.find((r: any) => r.contact_id === nameless.body.id);
  assert.equal(anon.status, 'completed');
  assert.deepEqual(
    anon.run_steps.map((s: any) => [s.step_key, s.status, s.data.result]),
    [
      ['has_name', 'completed', 'no'],
      ['skip', 'completed', 'ended'],
    ],
  );
  assert.equal(ada.status, 'running');
  assert.equal(ada.event, 'contact.added_to_audience');
  assert.match(ada.event_id, /^evt_/);
  assert.equal(ada.meta.source_event_id, ada.event_id);
  assert.equal(ada.payload.object.audience.id, audienceId);
  const mail = ada.run_steps.find((s: any) => s.step_key === 'mail');
  assert.equal(mail.step_id, automation.steps.find((s) => s.key === 'mail')!.id);
  assert.deepEqual({ ...mail.data, email_oid: 'x' }, { result: 'sent', outcome: 'accepted', email_oid: 'x', to: 'ada@example.org' });
  const wait = ada.run_steps.find((s: any) => s.step_key === 'later');
  assert.deepEqual(wait.data, { status: 'waiting', delayMs: 3_600_000, seconds: 3600 });

  // The email reaches the sink, rendered with the contact's variables.
  const [message] = await app.sink.waitForMessages(1, 10_000);
  assert.deepEqual(message.rcptTo, ['ada@example.org']);
  const parsed = await app.parse(message.raw);
  assert.equal(parsed.subject, 'Welcome Ada');
  assert.match(String(parsed.html), /Hello Ada from nowhere/);
  assert.equal(hooks.on('/welcome').length, 0);

  // An hour later (the clock seam), the wait ends and the webhook is called.
  shiftClock(3_600_000 + 1000);
  try {
    const [done] = await settledRuns(app.api, automation.id, 2, 10_000).then((runs) => runs.filter((r) => r.id === ada.id));
    assert.equal(done.status, 'completed');
    assert.ok(done.completed_at >= done.started_at);
    assert.deepEqual(
      done.run_steps.map((s: any) => [s.step_key, s.status]),
      [
        ['has_name', 'completed'],
        ['mail', 'completed'],
        ['later', 'completed'],
        ['notify', 'completed'],
      ],
    );
    assert.deepEqual(done.run_steps[2].data, { status: 'completed', delayMs: 3_600_000, seconds: 3600 });
    assert.deepEqual(done.run_steps[3].data, { result: '2xx', status: 200 });
    const [call] = hooks.on(`/welcome/${contact.body.id}`);
    assert.equal(call.method, 'POST');
    assert.equal(call.headers['x-run'], ada.id);
    assert.deepEqual(call.json, { email: 'ada@example.org', source: ada.event_id, audience: 'Newsletter' });
  } finally {
    resetClock();
  }
  const after = (await app.api.get(`/v2/automations/${automation.id}`)).body.data;
  assert.equal(before.last_triggered_at, null);
  assert.ok(after.last_triggered_at);
  // Each step once, the email once.
  const emails = await db().selectFrom('emails').select('id').where('to', '=', 'ada@example.org').execute();
  assert.equal(emails.length, 1);
});

test('events from before the start, and while paused or stopped, never start runs', async () => {
  const graph = {
    context: 'contact',
    name: 'Updates',
    steps: [
      { key: 't', type: 'trigger', trigger: 'contact.updated' },
      { key: 'e', type: 'action', action: 'end' },
    ],
    connections: [{ from: 't', to: 'e' }],
  };
  const contact = (await app.api.post('/v2/contacts', { email: 'timing@example.org' })).body;
  const created = (await app.api.post('/v2/automations', graph)).body.data;
  await app.api.post(`/v2/contacts/${contact.id}`, { first_name: 'Draft' });
  await app.api.post(`/v2/automations/${created.id}/start`);
  await app.api.post(`/v2/contacts/${contact.id}`, { first_name: 'Running' });
  await settledRuns(app.api, created.id, 1);
  await app.api.post(`/v2/automations/${created.id}/pause`);
  await app.api.post(`/v2/contacts/${contact.id}`, { first_name: 'Paused' });
  await app.api.post(`/v2/automations/${created.id}/stop`);
  await app.api.post(`/v2/contacts/${contact.id}`, { first_name: 'Stopped' });
  await new Promise((r) => setTimeout(r, 1500));
  const runs = await allRuns(app.api, created.id);
  assert.equal(runs.length, 1);
  assert.equal(runs[0].payload.object.first_name, 'Running');
});

test('email.bounced with a filter starts an email-context run about that email', async () => {
  const automation = await startedAutomation(app.api, {
    context: 'email',
    name: 'Bounces',
    steps: [
      {
        key: 'bounced',
        type: 'trigger',
        trigger: 'email.bounced',
        config: { filter: { match: 'all', rules: [{ field: 'subject', operator: 'starts_with', value: 'Invoice' }] } },
      },
      { key: 'suppress', type: 'action', action: 'add_to_suppressions', config: { reason: 'bounced {{email.subject}}' } },
      {
        key: 'tell',
        type: 'action',
        action: 'call_webhook',
        config: { url: `${hooks.url}/bounce`, body: '{{email.to}} via {{email.mail_from}}' },
      },
    ],
    connections: [
      { from: 'bounced', to: 'suppress' },
      { from: 'suppress', to: 'tell' },
    ],
  });
  const send = (to: string, subject: string) => app.api.post('/v2/emails', { from: 'hello@acme.test', to, subject, text: 'x' });
  const invoice = await send('bounce@example.org', 'Invoice 42');
  const news = await send('bounce@example.net', 'News');
  await app.waitForStatus(invoice.body.id, 'bounced');
  await app.waitForStatus(news.body.id, 'bounced');
  const [run] = await settledRuns(app.api, automation.id, 1);
  assert.equal(run.status, 'completed', JSON.stringify(run));
  assert.equal(run.email_id, invoice.body.id);
  assert.equal(run.event, 'email.bounced');
  assert.equal(run.payload.object.id, invoice.body.id);
  const [call] = hooks.on('/bounce');
  assert.equal(call.body, 'bounce@example.org via hello@acme.test');
  const suppression = await app.api.get('/v2/suppressions/bounce@example.org');
  assert.equal(suppression.status, 200);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await allRuns(app.api, automation.id)).length, 1, 'the News bounce does not pass the filter');
});

test('an experiment follows its weights over 1,000 runs; variant edges then default edges', async () => {
  const automation = await startedAutomation(
    app.api,
    manualGraph(
      [
        {
          key: 'split',
          type: 'action',
          action: 'experiment',
          config: {
            variants: [
              { key: 'a', weight: 3 },
              { key: 'b', weight: 1 },
            ],
            control: 'a',
          },
        },
        { key: 'only_a', type: 'action', action: 'end' },
        { key: 'only_b', type: 'action', action: 'end' },
        { key: 'everyone', type: 'action', action: 'end' },
      ],
      [
        { from: 'split', to: 'only_a', branch: 'a' },
        { from: 'split', to: 'only_b', branch: 'b' },
        { from: 'split', to: 'everyone' },
      ],
    ),
  );
  for (let i = 0; i < 1000; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: 50 }, () => app.api.post(`/v2/automations/${automation.id}/trigger`, { payload: { n: i } })),
    );
    for (const r of batch) assert.equal(r.status, 201, r.text);
  }
  const stats = await eventually(
    async () => {
      const response = await app.api.get(`/v2/automations/${automation.id}/stats`);
      return response.body.data.everyone.total === 1000 && response.body.data;
    },
    60_000,
    200,
  );
  const a = stats.split.by_outcome.a;
  const b = stats.split.by_outcome.b;
  assert.equal(a + b, 1000);
  // Expected 750 ± 5 standard deviations (σ ≈ 13.7).
  assert.ok(Math.abs(a - 750) < 69, `a=${a} b=${b}`);
  assert.equal(stats.only_a.total, a);
  assert.equal(stats.only_b.total, b);
  assert.deepEqual(stats.start, { total: 0, by_status: { running: 0, waiting: 0, completed: 0, failed: 0 }, by_outcome: {} });
});

test('allow_reentry false and cooldown_seconds: 50 simultaneous events for one contact start one run each', async () => {
  const contact = (await app.api.post('/v2/contacts', { email: 'busy@example.org' })).body;
  const waitGraph = {
    context: 'contact',
    name: 'No re-entry',
    settings: { allow_reentry: false },
    steps: [
      { key: 't', type: 'trigger', trigger: 'contact.updated' },
      { key: 'w', type: 'action', action: 'wait', config: { seconds: 3600 } },
    ],
    connections: [{ from: 't', to: 'w' }],
  };
  const noReentry = await startedAutomation(app.api, waitGraph);
  const cooldown = await startedAutomation(app.api, {
    ...waitGraph,
    name: 'Cooldown',
    settings: { allow_reentry: true, cooldown_seconds: 3600 },
    steps: [
      { key: 't', type: 'trigger', trigger: 'contact.updated' },
      { key: 'e', type: 'action', action: 'end' },
    ],
    connections: [{ from: 't', to: 'e' }],
  });
  const updates = await Promise.all(
    Array.from({ length: 50 }, (_, i) => app.api.post(`/v2/contacts/${contact.id}`, { first_name: `Busy ${i}` })),
  );
  for (const u of updates) assert.equal(u.status, 200, u.text);
  await eventually(
    async () => (await db().selectFrom('jobs').select('id').where('type', '=', 'automation.trigger').execute()).length === 0,
    20_000,
    100,
  );
  const held = await allRuns(app.api, noReentry.id);
  assert.equal(held.length, 1);
  assert.equal(held[0].status, 'running');
  const cooled = await allRuns(app.api, cooldown.id);
  assert.equal(cooled.length, 1);

  // Manual triggers together: one run, the rest 409.
  const manual = await startedAutomation(app.api, {
    ...waitGraph,
    name: 'Manual no re-entry',
    steps: [
      { key: 't', type: 'trigger', trigger: 'system.manual' },
      { key: 'w', type: 'action', action: 'wait', config: { seconds: 3600 } },
    ],
  });
  const calls = await Promise.all(
    Array.from({ length: 50 }, () => app.api.post(`/v2/automations/${manual.id}/trigger`, { payload: { contact_id: contact.id } })),
  );
  assert.deepEqual(calls.map((c) => c.status).sort(), [201, ...Array(49).fill(409)]);
  // When the run ends (removed from the automation), the contact may enter again.
  const removed = await app.api.delete(`/v2/automations/${manual.id}/contacts/${contact.id}`);
  assert.deepEqual(removed.body.data, { automation_id: manual.id, contact_id: contact.id, canceled_runs: 1 });
  const again = await app.api.post(`/v2/automations/${manual.id}/trigger`, { payload: { contact_id: 'busy@example.org' } });
  assert.equal(again.status, 201, again.text);
  const filtered = await app.api.get(`/v2/automations/${manual.id}/runs?status=canceled&contact_id=${contact.id}`);
  assert.equal(filtered.body.total_records, 1);
  assert.equal(filtered.body.data[0].run_steps[0].status, 'failed');
});

test('max_concurrent_runs, run cancel, and stop cancelling waiting runs (their waits never resume)', async () => {
  const automation = await startedAutomation(
    app.api,
    manualGraph(
      [
        { key: 'w', type: 'action', action: 'wait', config: { seconds: 600 } },
        { key: 'h', type: 'action', action: 'call_webhook', config: { url: `${hooks.url}/after-wait` } },
      ],
      [{ from: 'w', to: 'h' }],
      {
        settings: { max_concurrent_runs: 2 },
      },
    ),
  );
  const first = await Promise.all(Array.from({ length: 5 }, () => app.api.post(`/v2/automations/${automation.id}/trigger`, {})));
  assert.deepEqual(first.map((r) => r.status).sort(), [201, 201, 409, 409, 409]);
  const running = first.filter((r) => r.status === 201).map((r) => r.body.data);
  const canceled = await app.api.post(`/v2/automations/${automation.id}/runs/${running[0].id}/cancel`);
  assert.equal(canceled.status, 200);
  assert.equal(canceled.body.data.status, 'canceled');
  assert.equal((await app.api.post(`/v2/automations/${automation.id}/runs/${running[0].id}/cancel`)).status, 422);
  const third = await app.api.post(`/v2/automations/${automation.id}/trigger`, {});
  assert.equal(third.status, 201, 'a place was freed');
  await eventually(
    async () => (await allRuns(app.api, automation.id, '&status=running')).every((r) => r.run_steps[0]?.status === 'waiting'),
    5000,
  );
  const stopped = await app.api.post(`/v2/automations/${automation.id}/stop`);
  assert.equal(stopped.body.data.status, 'stopped');
  const runs = await allRuns(app.api, automation.id);
  assert.deepEqual(runs.map((r) => r.status).sort(), ['canceled', 'canceled', 'canceled']);
  assert.equal((await app.api.post(`/v2/automations/${automation.id}/trigger`, {})).status, 422);
  shiftClock(601_000);
  try {
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(hooks.on('/after-wait').length, 0);
    assert.deepEqual(
      (await allRuns(app.api, automation.id)).map((r) => r.run_steps.map((s: any) => s.status)),
      [['failed'], ['failed'], ['failed']],
    );
  } finally {
    resetClock();
  }
});

test('costs: 3 credits a run plus 1 per email; a run that cannot pay fails with the reason; unverified workspaces reach members only', async () => {
  const { workspace, api } = await app.newWorkspace({ credits: 4, verified: false, members: ['owner@example.org'] });
  await app.verifiedDomain('costs.test', api);
  await api.post('/v2/templates', { name: 'T', alias: 't', from: 'hi@costs.test', subject: 'S', text: 'Body' });
  const automation = await startedAutomation(
    api,
    manualGraph(
      [{ key: 'm', type: 'action', action: 'send_email', config: { type: 'template', template_id: 't', to: '{{payload.to}}' } }],
      [],
    ),
  );
  const paid = await api.post(`/v2/automations/${automation.id}/trigger`, { payload: { to: 'owner@example.org' } });
  assert.equal(paid.status, 201);
  const [ok] = await settledRuns(api, automation.id, 1);
  assert.equal(ok.status, 'completed', JSON.stringify(ok));
  const credits = async () =>
    Number((await db().selectFrom('workspaces').select('credits').where('id', '=', workspace.id).executeTakeFirstOrThrow()).credits);
  assert.equal(await credits(), 0, '3 for the run + 1 for the email');
  const broke = await api.post(`/v2/automations/${automation.id}/trigger`, { payload: { to: 'owner@example.org' } });
  assert.equal(broke.body.data.status, 'failed');
  assert.equal(broke.body.data.run_steps[0].status, 'failed');
  assert.match(broke.body.data.run_steps[0].data.error, /^Insufficient credits/);

  await updateWorkspace(db(), workspace.id, { credits: 100 });
  const stranger = await api.post(`/v2/automations/${automation.id}/trigger`, { payload: { to: 'stranger@example.org' } });
  const failed = await eventually(async () => {
    const run = (await api.get(`/v2/automations/${automation.id}/runs/${stranger.body.data.id}`)).body.data;
    return run.status !== 'running' && run;
  });
  assert.equal(failed.status, 'failed');
  assert.match(failed.run_steps[0].data.error, /Recipient not allowed/);
  const stats = (await api.get(`/v2/automations/${automation.id}/steps/m/stats`)).body.data;
  assert.equal(stats.by_status.failed, 2);
  assert.equal(stats.by_outcome.error, 2);
});

test('contact actions and on_step_failure skip; date triggers at 00:00 UTC', async () => {
  const target = (await app.api.post('/v2/audiences', { name: 'VIP' })).body.id;
  const field = await app.api.post('/v2/custom-fields', { key: 'birthday', label: 'Birthday', type: 'date' });
  assert.ok([200, 201].includes(field.status), field.text);
  const automation = await startedAutomation(app.api, {
    context: 'contact',
    name: 'Birthdays',
    settings: { on_step_failure: 'skip' },
    steps: [
      { key: 'bday', type: 'trigger', trigger: 'contact.date_anniversary', config: { date_field: 'birthday' } },
      { key: 'manual', type: 'trigger', trigger: 'system.manual' },
      { key: 'vip', type: 'action', action: 'add_to_audience', config: { audience_id: target } },
      { key: 'broken', type: 'action', action: 'edit_contact', config: { fields: [{ key: 'birthday', value: 'not a date' }] } },
      {
        key: 'edit',
        type: 'action',
        action: 'edit_contact',
        config: {
          fields: [
            { key: 'last_name', value: 'Celebrated' },
            { key: 'birthday', value: '2000-01-01' },
          ],
        },
      },
    ],
    connections: [
      { from: 'bday', to: 'vip' },
      { from: 'manual', to: 'vip' },
      { from: 'vip', to: 'broken' },
      { from: 'broken', to: 'edit' },
    ],
  });
  const today = new Date().toISOString().slice(0, 10);
  const born = (await app.api.post('/v2/contacts', { email: 'born@example.org', custom_fields: { birthday: `1990-${today.slice(5)}` } }))
    .body;
  await app.api.post('/v2/contacts', {
    email: 'notyet@example.org',
    custom_fields: { birthday: '1990-01-01' === `1990-${today.slice(5)}` ? '1990-01-02' : '1990-01-01' },
  });
  assert.equal(await fireDateTriggers(app.running.ctx, today), 1);
  assert.equal(await fireDateTriggers(app.running.ctx, today), 0, 'one run per contact and day');
  const [run] = await settledRuns(app.api, automation.id, 1);
  assert.equal(run.contact_id, born.id);
  assert.equal(run.event, 'contact.date_anniversary');
  assert.equal(run.status, 'completed', JSON.stringify(run));
  assert.deepEqual(
    run.run_steps.map((s: any) => [s.step_key, s.status]),
    [
      ['vip', 'completed'],
      ['broken', 'failed'],
      ['edit', 'completed'],
    ],
  );
  assert.match(run.run_steps[1].data.error, /birthday/);
  const contact = (await app.api.get(`/v2/contacts/${born.id}`)).body;
  assert.equal(contact.last_name, 'Celebrated');
  assert.equal(contact.custom_fields.birthday, '2000-01-01');
  assert.ok(contact.audiences.some((a: any) => a.id === target));
});

test('stats and the send_email funnel after scripted deliveries, bounces, opens and clicks', async () => {
  const domain = (await app.api.get('/v2/domains/acme.test')).body;
  const tracked = await app.api.patch(`/v2/domains/${domain.id}`, { track_loads: true, track_clicks: true });
  assert.equal(tracked.status, 200, tracked.text);
  const automation = await startedAutomation(
    app.api,
    manualGraph(
      [{ key: 'm', type: 'action', action: 'send_email', config: { type: 'template', template_id: 'welcome', to: '{{payload.to}}' } }],
      [],
    ),
  );
  const recipients = ['f1@example.org', 'f2@example.org', 'f3@example.org', 'f4@example.org', 'bounce@example.com'];
  const started = app.sink.messages.length;
  const runs = [];
  for (const to of recipients) runs.push((await app.api.post(`/v2/automations/${automation.id}/trigger`, { payload: { to } })).body.data);
  await app.sink.waitForMessages(started + 4, 15_000);
  await eventually(async () => (await app.api.get(`/v2/automations/${automation.id}/stats`)).body.data.m.by_outcome.bounced === 1, 15_000);
  await link('f1@example.org', 'open');
  await link('f2@example.org', 'open');
  await link('f2@example.org', 'click');
  await link('f3@example.org', 'click');
  const stats = await eventually(async () => {
    const data = (await app.api.get(`/v2/automations/${automation.id}/steps/m/stats`)).body.data;
    return data.by_outcome.clicked === 2 && data.by_outcome.loaded === 1 && data.by_outcome.delivered === 1 && data;
  }, 15_000);
  assert.equal(stats.total, 5);
  assert.deepEqual(stats.by_status, { running: 0, waiting: 0, completed: 5, failed: 0 });
  assert.deepEqual(stats.by_outcome, {
    accepted: 0,
    delivered: 1,
    loaded: 1,
    clicked: 2,
    bounced: 1,
    failed: 0,
    complained: 0,
    unsubscribed: 0,
    canceled: 0,
  });
  assert.deepEqual(stats.funnel, {
    accepted: 5,
    delivered: 4,
    loaded: 3,
    clicked: 2,
    bounced: 1,
    failed: 0,
    complained: 0,
    unsubscribed: 0,
  });
  // since/until and run_ids[] narrow the runs counted.
  const two = await app.api.get(`/v2/automations/${automation.id}/stats?run_ids[]=${runs[0].id}&run_ids[]=${runs[4].id}`);
  assert.equal(two.status, 200, two.text);
  assert.deepEqual(two.body.data.m.funnel, {
    accepted: 2,
    delivered: 1,
    loaded: 1,
    clicked: 0,
    bounced: 1,
    failed: 0,
    complained: 0,
    unsubscribed: 0,
  });
  const future = await app.api.get(
    `/v2/automations/${automation.id}/stats?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
  );
  assert.equal(future.body.data.m.total, 0);
  const past = await app.api.get(
    `/v2/automations/${automation.id}/steps/m/stats?until=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`,
  );
  assert.equal(past.body.data.total, 0);
});

test('more triggers and actions: loaded_email, removed_from_audience, email.delivered with forward_email and create_contact, run_automation; accepted triggers that never fire', async () => {
  // Tracking is on for acme.test (the funnel test may not have run first).
  const domain = (await app.api.get('/v2/domains/acme.test')).body;
  await app.api.patch(`/v2/domains/${domain.id}`, { track_loads: true, track_clicks: true });
  const x = (await app.api.post('/v2/audiences', { name: 'X' })).body.id;
  const y = (await app.api.post('/v2/audiences', { name: 'Y' })).body.id;
  const reader = (await app.api.post('/v2/contacts', { email: 'reader@example.org', first_name: 'Rea', audiences: [x, y] })).body;

  const loaded = await startedAutomation(app.api, {
    context: 'contact',
    name: 'Opened',
    steps: [
      { key: 'open', type: 'trigger', trigger: 'contact.loaded_email' },
      {
        key: 'tag',
        type: 'action',
        action: 'edit_contact',
        config: { fields: [{ key: 'opened', value: '{{payload.object.email.subject}}' }] },
      },
    ],
    connections: [{ from: 'open', to: 'tag' }],
  });
  const left = await startedAutomation(app.api, {
    context: 'contact',
    name: 'Left X',
    steps: [
      { key: 'left', type: 'trigger', trigger: 'contact.removed_from_audience', config: { audience_id: x } },
      { key: 'drop', type: 'action', action: 'remove_from_audience', config: { audience_id: y } },
    ],
    connections: [{ from: 'left', to: 'drop' }],
  });
  const never = await startedAutomation(app.api, {
    context: 'contact',
    name: 'Never',
    steps: [
      { key: 'visit', type: 'trigger', trigger: 'contact.visits_url' },
      { key: 'e', type: 'action', action: 'end' },
    ],
    connections: [{ from: 'visit', to: 'e' }],
  });
  const delivered = await startedAutomation(app.api, {
    context: 'email',
    name: 'Forward deliveries',
    steps: [
      {
        key: 'ok',
        type: 'trigger',
        trigger: 'email.delivered',
        config: { filter: { rules: [{ field: 'subject', operator: 'equals', value: 'Forward me' }] } },
      },
      { key: 'fwd', type: 'action', action: 'forward_email', config: { to: 'copies@example.org' } },
      { key: 'person', type: 'action', action: 'create_contact', config: { first_name: 'From {{email.mail_from}}', audience_id: x } },
      { key: 'unsuppress', type: 'action', action: 'remove_from_suppressions', config: {} },
    ],
    connections: [
      { from: 'ok', to: 'fwd' },
      { from: 'fwd', to: 'person' },
      { from: 'person', to: 'unsuppress' },
    ],
  });
  const child = await startedAutomation(
    app.api,
    manualGraph(
      [{ key: 'hook', type: 'action', action: 'call_webhook', config: { url: `${hooks.url}/child/{{payload.code}}`, method: 'PUT' } }],
      [],
    ),
  );
  const parent = await startedAutomation(
    app.api,
    manualGraph(
      [
        { key: 'go', type: 'action', action: 'run_automation', config: { automation_id: child.id } },
        { key: 'after', type: 'action', action: 'end' },
      ],
      [{ from: 'go', to: 'after' }],
    ),
  );

  // An email to the contact, opened.
  const sent = await app.api.post('/v2/emails', {
    from: 'hello@acme.test',
    to: 'reader@example.org',
    subject: 'Forward me',
    html: '<p>Hi <a href="https://shop.example.com/">shop</a></p>',
  });
  assert.equal(sent.status, 200, sent.text);
  await app.waitForStatus(sent.body.id, 'delivered');
  await link('reader@example.org', 'open');
  const [openRun] = await settledRuns(app.api, loaded.id, 1);
  assert.equal(openRun.contact_id, reader.id);
  assert.equal(openRun.status, 'completed', JSON.stringify(openRun));
  assert.equal((await app.api.get(`/v2/contacts/${reader.id}`)).body.custom_fields.opened, 'Forward me');

  // The delivery: forwarded with a Fwd: subject, the recipient's contact found (not created).
  const [fwdRun] = await settledRuns(app.api, delivered.id, 1);
  assert.equal(fwdRun.status, 'completed', JSON.stringify(fwdRun));
  assert.equal(fwdRun.email_id, sent.body.id);
  assert.equal(fwdRun.contact_id, reader.id);
  const forwarded = await db().selectFrom('emails').selectAll().where('to', '=', 'copies@example.org').execute();
  assert.equal(forwarded.length, 1);
  assert.equal(forwarded[0].subject, 'Fwd: Forward me');
  assert.equal(fwdRun.run_steps[0].data.email_oid, forwarded[0].id);
  assert.deepEqual(fwdRun.run_steps[1].data, { result: 'found', contact_id: reader.id });
  assert.deepEqual(fwdRun.run_steps[2].data, { result: 'not_suppressed', email: 'reader@example.org' });

  // Leaving X removes the contact from Y too.
  await app.api.post(`/v2/contacts/${reader.id}`, { audiences: [y] });
  const [leftRun] = await settledRuns(app.api, left.id, 1);
  assert.deepEqual(leftRun.run_steps[0].data, { result: 'removed', audience_id: y });
  assert.deepEqual((await app.api.get(`/v2/contacts/${reader.id}`)).body.audiences, []);

  // run_automation starts the other automation with this run's payload; this run continues.
  const started = await app.api.post(`/v2/automations/${parent.id}/trigger`, { payload: { code: 'abc' } });
  assert.equal(started.status, 201);
  const [parentRun] = await settledRuns(app.api, parent.id, 1);
  assert.equal(parentRun.status, 'completed');
  const [childRun] = await settledRuns(app.api, child.id, 1);
  assert.equal(parentRun.run_steps[0].data.run_id, childRun.id);
  assert.equal(childRun.meta.parent_run_id, parentRun.id);
  assert.equal(childRun.status, 'completed');
  assert.deepEqual(
    hooks.on('/child/').map((r) => [r.method, r.path]),
    [['PUT', '/child/abc']],
  );

  assert.equal((await allRuns(app.api, never.id)).length, 0);
});

test('conditions: every operator, match any/all, text compared case-sensitively, numbers as numbers, prefixes', async () => {
  const rules = (match: string, ...list: Array<Record<string, unknown>>) => ({ match, rules: list });
  const automation = await startedAutomation(
    app.api,
    manualGraph(
      [
        {
          key: 'check',
          type: 'action',
          action: 'condition',
          config: {
            filter: rules(
              'all',
              { field: 'payload.object.plan', operator: 'equals', value: 'Pro' },
              { field: 'object.name', operator: 'starts_with', value: 'Ad' },
              { field: 'payload.object.name', operator: 'ends_with', value: 'da' },
              { field: 'payload.object.name', operator: 'contains', value: 'd' },
              { field: 'payload.object.name', operator: 'not_contains', value: 'D' },
              { field: 'payload.object.total', operator: 'greater_than', value: 9 },
              { field: 'payload.object.total', operator: 'less_than', value: 100 },
              { field: 'payload.object.tags', operator: 'in', value: ['vip', 'new'] },
              { field: 'payload.object.country', operator: 'not_in', value: ['FR'] },
              { field: 'payload.object.coupon', operator: 'is_not_set' },
              { field: 'meta.source', operator: 'is_set' },
              { field: 'payload.object.plan', operator: 'not_equals', value: 'pro' },
            ),
          },
        },
        { key: 'yes', type: 'action', action: 'end' },
        { key: 'no', type: 'action', action: 'end' },
      ],
      [
        { from: 'check', to: 'yes', branch: 'yes' },
        { from: 'check', to: 'no', branch: 'no' },
      ],
    ),
  );
  const outcome = async (object: Record<string, unknown>) => {
    const run = (await app.api.post(`/v2/automations/${automation.id}/trigger`, { payload: { object } })).body.data;
    return run.run_steps.map((s: any) => s.step_key).join(',');
  };
  const good = { plan: 'Pro', name: 'Ada', total: '42', tags: ['old', 'vip'], country: 'NO' };
  assert.equal(await outcome(good), 'check,yes');
  assert.equal(await outcome({ ...good, plan: 'pro' }), 'check,no', 'equals is case-sensitive');
  assert.equal(await outcome({ ...good, name: 'ADA' }), 'check,no');
  assert.equal(await outcome({ ...good, total: 5 }), 'check,no');
  assert.equal(await outcome({ ...good, total: 'many' }), 'check,no');
  assert.equal(await outcome({ ...good, tags: ['old'] }), 'check,no');
  assert.equal(await outcome({ ...good, country: 'FR' }), 'check,no');
  assert.equal(await outcome({ ...good, coupon: 'X' }), 'check,no');

  const any = await startedAutomation(
    app.api,
    manualGraph(
      [
        {
          key: 'check',
          type: 'action',
          action: 'condition',
          config: {
            filter: rules(
              'any',
              { field: 'payload.object.a', operator: 'equals', value: 1 },
              { field: 'payload.object.b', operator: 'equals', value: true },
            ),
          },
        },
        { key: 'yes', type: 'action', action: 'end' },
      ],
      [{ from: 'check', to: 'yes', branch: 'yes' }],
    ),
  );
  const anyOutcome = async (object: Record<string, unknown>) =>
    (await app.api.post(`/v2/automations/${any.id}/trigger`, { payload: { object } })).body.data.run_steps.length;
  assert.equal(await anyOutcome({ a: 1 }), 2);
  assert.equal(await anyOutcome({ b: true }), 2);
  assert.equal(await anyOutcome({ a: 2, b: false }), 1);
});

test('pause holds runs at their next step; start resumes them', async () => {
  const automation = await startedAutomation(
    app.api,
    manualGraph(
      [
        { key: 'w', type: 'action', action: 'wait', config: { seconds: 60 } },
        { key: 'h', type: 'action', action: 'call_webhook', config: { url: `${hooks.url}/resumed/{{run.id}}` } },
      ],
      [{ from: 'w', to: 'h' }],
    ),
  );
  const run = (await app.api.post(`/v2/automations/${automation.id}/trigger`, {})).body.data;
  await eventually(
    async () => (await app.api.get(`/v2/automations/${automation.id}/runs/${run.id}`)).body.data.run_steps[0]?.status === 'waiting',
  );
  assert.equal((await app.api.post(`/v2/automations/${automation.id}/pause`)).body.data.status, 'paused');
  shiftClock(61_000);
  try {
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(hooks.on(`/resumed/${run.id}`).length, 0);
    assert.equal((await app.api.get(`/v2/automations/${automation.id}/runs/${run.id}`)).body.data.status, 'running');
    assert.equal((await app.api.post(`/v2/automations/${automation.id}/start`)).body.data.status, 'running');
    const done = await eventually(async () => {
      const current = (await app.api.get(`/v2/automations/${automation.id}/runs/${run.id}`)).body.data;
      return current.status === 'completed' && current;
    }, 10_000);
    assert.deepEqual(
      done.run_steps.map((s: any) => s.status),
      ['completed', 'completed'],
    );
    assert.equal(hooks.on(`/resumed/${run.id}`).length, 1);
  } finally {
    resetClock();
  }
});
