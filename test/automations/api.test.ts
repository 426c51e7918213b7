// The automations API over HTTP (https://emailit.com/docs/automations.md): create with graph
// validation (400 `errors` keyed by field path), list with the per_page envelope, retrieve,
// update with full config checks, delete, start/pause/stop transitions, 404 bodies.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';

let app: SendingApp;
let templateId: string;
let audienceId: string;
before(async () => {
  app = await startSendingApp();
  await app.verifiedDomain('acme.test');
  const template = await app.api.post('/v2/templates', {
    name: 'Welcome',
    alias: 'welcome',
    from: 'Acme <hello@acme.test>',
    subject: 'Hi {{first_name}}',
    html: '<p>Hello {{first_name}}</p>',
  });
  assert.equal(template.status, 201, template.text);
  templateId = template.body.data.id;
  const audience = await app.api.post('/v2/audiences', { name: 'Newsletter' });
  audienceId = audience.body.id;
});
after(() => app?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function welcomeGraph(): {
  context: string;
  name: string;
  description: string;
  settings: Record<string, unknown>;
  steps: Array<{ key: string; type: string; trigger?: string; action?: string; config?: Record<string, unknown> }>;
  connections: Array<Record<string, string>>;
} {
  return {
    context: 'contact',
    name: 'Welcome series',
    description: 'Greets new subscribers',
    settings: { allow_reentry: false },
    steps: [
      { key: 'joined', type: 'trigger', trigger: 'contact.added_to_audience', config: { audience_id: audienceId } },
      {
        key: 'check',
        type: 'action',
        action: 'condition',
        config: { filter: { match: 'all', rules: [{ field: 'first_name', operator: 'is_set' }] } },
      },
      { key: 'mail', type: 'action', action: 'send_email', config: { type: 'template', template_id: 'welcome', from: 'hello@acme.test' } },
      { key: 'pause', type: 'action', action: 'wait', config: { seconds: 60 } },
      { key: 'done', type: 'action', action: 'end' },
    ],
    connections: [
      { from: 'joined', to: 'check' },
      { from: 'check', to: 'mail', branch: 'yes' },
      { from: 'check', to: 'done', branch: 'no' },
      { from: 'mail', to: 'pause' },
      { from: 'pause', to: 'done' },
    ],
  };
}

test('create: 201 {data} as a draft with step ids, connections and default settings; retrieve returns the same', async () => {
  const created = await app.api.post('/v2/automations', welcomeGraph());
  assert.equal(created.status, 201, created.text);
  const data = created.body.data;
  assert.match(data.id, /^aut_[A-Za-z0-9]{27}$/);
  assert.equal(data.status, 'draft');
  assert.equal(data.context, 'contact');
  assert.equal(data.description, 'Greets new subscribers');
  assert.deepEqual(data.settings, { on_step_failure: 'stop', allow_reentry: false, max_concurrent_runs: 0, cooldown_seconds: 0 });
  assert.equal(data.last_triggered_at, null);
  assert.equal(data.published_at, null);
  assert.match(data.created_at, ISO);
  assert.equal(data.steps.length, 5);
  for (const step of data.steps) assert.match(step.id, /^aus_[A-Za-z0-9]{27}$/);
  assert.deepEqual(data.steps[0], {
    id: data.steps[0].id,
    key: 'joined',
    type: 'trigger',
    trigger: 'contact.added_to_audience',
    action: null,
    config: { audience_id: audienceId },
  });
  assert.deepEqual(data.connections[0], { from: 'joined', to: 'check', branch: 'default' });
  assert.deepEqual(data.connections[1], { from: 'check', to: 'mail', branch: 'yes' });
  const fetched = await app.api.get(`/v2/automations/${data.id}`);
  assert.equal(fetched.status, 200);
  assert.deepEqual(fetched.body, created.body);
});

test('create refuses bad graphs with every problem keyed by field path', async () => {
  const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
    [{}, { context: ['The context is required: contact, email or event.'], name: ['The name field is required.'] }],
    [
      { context: 'contact', name: 'x'.repeat(192), steps: [], connections: [] },
      { name: ['The name may not be greater than 191 characters.'], steps: ['The steps field is required and must be a non-empty array.'] },
    ],
  ];
  for (const [body, errors] of cases) {
    const response = await app.api.post('/v2/automations', body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.deepEqual(response.body, { message: 'Validation failed', errors });
  }
  const graph = {
    context: 'contact',
    name: 'Broken',
    steps: [
      { key: 'a', type: 'trigger', trigger: 'email.bounced' },
      { key: 'b', type: 'action', action: 'forward_email', config: {} },
      { key: 'b', type: 'action', action: 'end' },
      { key: 'c', type: 'action', action: 'teleport' },
      { key: 'd', type: 'action', action: 'condition', config: { filter: { rules: [] } } },
      { key: 'e', type: 'widget' },
    ],
    connections: [
      { from: 'a', to: 'd' },
      { from: 'd', to: 'zz', branch: 'yes' },
      { from: 'd', to: 'c', branch: 'maybe' },
      { from: 'c', to: 'a' },
    ],
    settings: { on_step_failure: 'explode', cooldown_seconds: -1 },
  };
  const response = await app.api.post('/v2/automations', graph);
  assert.equal(response.status, 400);
  const errors = response.body.errors;
  assert.deepEqual(errors['steps.0.trigger'], ['The trigger "email.bounced" is not valid in the contact context.']);
  assert.deepEqual(errors['steps.1.action'], ['The action "forward_email" is not available in the contact context.']);
  assert.deepEqual(errors['steps.2.key'], ['The key "b" is used by another step.']);
  assert.deepEqual(errors['steps.3.action'], ['The action "teleport" does not exist.']);
  assert.deepEqual(errors['steps.5.type'], ['The type must be trigger or action.']);
  assert.deepEqual(errors['connections.1.to'], ['The to must be the key of a step.']);
  assert.deepEqual(errors['connections.2.branch'], ['A condition connects by the yes or no branch.']);
  assert.deepEqual(errors['connections.3.to'], ['A connection cannot lead to a trigger.']);
  assert.deepEqual(errors['settings.on_step_failure'], ['The on_step_failure must be stop or skip.']);
  assert.deepEqual(errors['settings.cooldown_seconds'], ['The cooldown_seconds must be a whole number of at least 0.']);
  assert.ok(
    errors['steps.1'].some((m: string) => m.includes('cannot be reached')),
    JSON.stringify(errors),
  );

  // Event context: exactly one trigger; all triggers lead to the same first action.
  const event = await app.api.post('/v2/automations', {
    context: 'event',
    name: 'Two',
    steps: [
      { key: 't1', type: 'trigger', trigger: 'event.order_paid' },
      { key: 't2', type: 'trigger', trigger: 'system.manual' },
      { key: 'a', type: 'action', action: 'end' },
      { key: 'b', type: 'action', action: 'end' },
    ],
    connections: [
      { from: 't1', to: 'a' },
      { from: 't2', to: 'b' },
    ],
  });
  assert.equal(event.status, 400);
  assert.deepEqual(event.body.errors.steps, ['An event automation has exactly one trigger.']);
  assert.deepEqual(event.body.errors.connections, ['All triggers must be connected to the same first action.']);

  // send_email `from` must be on a verified domain, already at creation.
  const unverified = welcomeGraph();
  unverified.steps[2].config = { type: 'template', template_id: 'welcome', from: 'news@elsewhere.test' };
  const from = await app.api.post('/v2/automations', unverified);
  assert.equal(from.status, 400);
  assert.deepEqual(from.body.errors, {
    'steps.2.config.from': ['The domain elsewhere.test is not a verified sending domain of the workspace.'],
  });

  // A loop is refused.
  const loop = await app.api.post('/v2/automations', {
    context: 'event',
    name: 'Loop',
    steps: [
      { key: 't', type: 'trigger', trigger: 'system.manual' },
      { key: 'a', type: 'action', action: 'wait', config: { seconds: 1 } },
      { key: 'b', type: 'action', action: 'wait', config: { seconds: 1 } },
    ],
    connections: [
      { from: 't', to: 'a' },
      { from: 'a', to: 'b' },
      { from: 'b', to: 'a' },
    ],
  });
  assert.deepEqual(loop.body.errors, { connections: ['The connections form a loop.'] });
});

test('creation checks structure only; update and start check every action config', async () => {
  const draft = await app.api.post('/v2/automations', {
    context: 'event',
    name: 'Half done',
    steps: [
      { key: 't', type: 'trigger', trigger: 'system.manual' },
      { key: 'w', type: 'action', action: 'wait', config: {} },
      {
        key: 'x',
        type: 'action',
        action: 'experiment',
        config: {
          variants: [
            { key: 'a', weight: 1 },
            { key: 'a', weight: -1 },
          ],
        },
      },
      { key: 'h', type: 'action', action: 'call_webhook', config: { url: 'ftp://nope', method: 'BREW' } },
      { key: 'm', type: 'action', action: 'send_email', config: { template_id: 'nope' } },
    ],
    connections: [
      { from: 't', to: 'w' },
      { from: 'w', to: 'x' },
      { from: 'x', to: 'h', branch: 'a' },
      { from: 'x', to: 'm' },
    ],
  });
  assert.equal(draft.status, 201, draft.text);
  const id = draft.body.data.id;
  const started = await app.api.post(`/v2/automations/${id}/start`);
  assert.equal(started.status, 400);
  assert.deepEqual(started.body.errors, {
    'steps.1.config.seconds': ['The seconds is required: a whole number from 0 to 2592000.'],
    'steps.2.config.variants.1.key': ['Each variant needs a unique key (not default).'],
    'steps.2.config.variants.1.weight': ['The weight must be a number of at least 0.'],
    'steps.3.config.url': ['The url must be an http or https URL.'],
    'steps.3.config.method': ['The method must be one of GET, POST, PUT, PATCH, DELETE.'],
    'steps.4.config.type': ['The type is required and must be template.'],
    'steps.4.config.template_id': ['No template version with this id and no published template with this alias exists.'],
    'steps.4.config.to': ['The to is required outside the contact context.'],
  });
  assert.equal((await app.api.get(`/v2/automations/${id}`)).body.data.status, 'draft');
  const update = await app.api.post(`/v2/automations/${id}`, { name: 'Still broken' });
  assert.equal(update.status, 400);
  assert.equal(Object.keys(update.body.errors).length, 8);
  const tooLong = await app.api.post(`/v2/automations/${id}`, {
    steps: [
      { key: 't', type: 'trigger', trigger: 'system.manual' },
      { key: 'w', type: 'action', action: 'wait', config: { seconds: 2_592_001 } },
    ],
    connections: [{ from: 't', to: 'w' }],
  });
  assert.deepEqual(tooLong.body.errors, { 'steps.1.config.seconds': ['The seconds is required: a whole number from 0 to 2592000.'] });
  const fixed = await app.api.post(`/v2/automations/${id}`, {
    name: 'Fixed',
    context: 'event',
    steps: [
      { key: 't', type: 'trigger', trigger: 'system.manual' },
      { key: 'm', type: 'action', action: 'send_email', config: { type: 'template', template_id: templateId, to: '{{payload.email}}' } },
    ],
    connections: [{ from: 't', to: 'm' }],
  });
  assert.equal(fixed.status, 200, fixed.text);
  assert.equal(fixed.body.data.name, 'Fixed');
  assert.equal(fixed.body.data.steps[0].id, draft.body.data.steps[0].id, 'a kept key keeps its step id');
  const context = await app.api.post(`/v2/automations/${id}`, { context: 'contact' });
  assert.deepEqual(context.body.errors, { context: ['The context cannot be changed.'] });
});

test('start, pause, stop: statuses, published_at, refusals; 404 {message} everywhere for unknown or foreign ids', async () => {
  const created = (await app.api.post('/v2/automations', welcomeGraph())).body.data;
  const pauseDraft = await app.api.post(`/v2/automations/${created.id}/pause`);
  assert.equal(pauseDraft.status, 409);
  const started = await app.api.post(`/v2/automations/${created.id}/start`);
  assert.equal(started.status, 200, started.text);
  assert.equal(started.body.data.status, 'running');
  assert.match(started.body.data.published_at, ISO);
  assert.equal((await app.api.post(`/v2/automations/${created.id}/pause`)).body.data.status, 'paused');
  assert.equal((await app.api.post(`/v2/automations/${created.id}/start`)).body.data.status, 'running');
  assert.equal((await app.api.post(`/v2/automations/${created.id}/stop`)).body.data.status, 'stopped');

  const other = await app.newWorkspace();
  const paths: Array<[string, string]> = [
    ['GET', ''],
    ['POST', ''],
    ['DELETE', ''],
    ['POST', '/start'],
    ['POST', '/pause'],
    ['POST', '/stop'],
    ['POST', '/trigger'],
    ['GET', '/runs'],
    ['GET', '/runs/aur_000000000000000000000000000'],
    ['GET', '/stats'],
    ['GET', '/steps/joined/stats'],
    ['DELETE', '/contacts/someone@example.com'],
  ];
  for (const [method, path] of paths) {
    const response = await other.api.request(method, `/v2/automations/${created.id}${path}`, method === 'POST' ? {} : undefined);
    assert.deepEqual([response.status, response.body], [404, { message: 'Automation not found.' }], `${method} ${path}`);
  }
  const step = await app.api.get(`/v2/automations/${created.id}/steps/nope/stats`);
  assert.deepEqual([step.status, step.body], [404, { message: 'Step not found.' }]);
  const run = await app.api.get(`/v2/automations/${created.id}/runs/aur_000000000000000000000000000`);
  assert.deepEqual([run.status, run.body], [404, { message: 'Run not found.' }]);
});

test('list: page/per_page envelope, newest first, status filter; delete', async () => {
  const { api } = await app.newWorkspace();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const created = await api.post('/v2/automations', {
      context: 'event',
      name: `A${i}`,
      steps: [{ key: 't', type: 'trigger', trigger: 'system.manual' }],
      connections: [],
    });
    assert.equal(created.status, 201, created.text);
    ids.push(created.body.data.id);
  }
  const page1 = await api.get('/v2/automations?per_page=2');
  assert.equal(page1.status, 200);
  assert.deepEqual(
    page1.body.data.map((a: any) => a.id),
    [ids[2], ids[1]],
  );
  assert.equal(page1.body.total_records, 3);
  assert.equal(page1.body.per_page, 2);
  assert.equal(page1.body.current_page, 1);
  assert.equal(page1.body.total_pages, 2);
  const page2 = await api.get('/v2/automations?per_page=2&page=2');
  assert.deepEqual(
    page2.body.data.map((a: any) => a.id),
    [ids[0]],
  );
  await api.post(`/v2/automations/${ids[0]}/start`);
  const running = await api.get('/v2/automations?status=running');
  assert.deepEqual(
    running.body.data.map((a: any) => a.id),
    [ids[0]],
  );
  const deleted = await api.delete(`/v2/automations/${ids[1]}`);
  assert.deepEqual(deleted.body, { data: { id: ids[1], deleted: true } });
  assert.equal((await api.get(`/v2/automations/${ids[1]}`)).status, 404);
  assert.equal((await api.get('/v2/automations')).body.total_records, 2);
  assert.equal((await app.as(null).get('/v2/automations')).status, 401);
});

test("start checks the template's from when the step has none: on a verified domain", async () => {
  const template = await app.api.post('/v2/templates', {
    name: 'Elsewhere',
    alias: 'elsewhere',
    from: 'News <news@elsewhere.test>',
    subject: 'S',
    text: 'T',
  });
  assert.equal(template.status, 201, template.text);
  const graph = welcomeGraph();
  graph.steps[2].config = { type: 'template', template_id: 'elsewhere' };
  const created = await app.api.post('/v2/automations', graph);
  assert.equal(created.status, 201, created.text);
  const started = await app.api.post(`/v2/automations/${created.body.data.id}/start`);
  assert.equal(started.status, 400);
  assert.deepEqual(started.body.errors, {
    'steps.2.config.from': ['The domain elsewhere.test is not a verified sending domain of the workspace.'],
  });
  const fixed = await app.api.post(`/v2/automations/${created.body.data.id}`, {
    steps: graph.steps.map((s, i) => (i === 2 ? { ...s, config: { ...s.config, from: 'Acme <hello@acme.test>' } } : s)),
  });
  assert.equal(fixed.status, 200, fixed.text);
  assert.equal((await app.api.post(`/v2/automations/${created.body.data.id}/start`)).body.data.status, 'running');
});
