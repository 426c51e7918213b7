// What an automation builder reads and calls: GET /v2/automations/catalog (every trigger and action
// with its config as JSON Schema) and POST /v2/automations/validate (the save path's checks,
// nothing saved). A config drawn from the catalogue's schema passes the checks, and the checks
// answer validate as they answer start.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';

let app: SendingApp;
let templateId: string;
let audienceId: string;
let otherId: string;
before(async () => {
  app = await startSendingApp();
  await app.verifiedDomain('acme.test');
  const template = await app.api.post('/v2/templates', {
    name: 'Welcome',
    alias: 'welcome',
    from: 'Acme <hello@acme.test>',
    subject: 'Hi',
    html: '<p>Hello</p>',
  });
  assert.equal(template.status, 201, template.text);
  templateId = template.body.data.id;
  audienceId = (await app.api.post('/v2/audiences', { name: 'Newsletter' })).body.id;
  const other = await app.api.post('/v2/automations', {
    context: 'event',
    name: 'Other',
    steps: [{ key: 't', type: 'trigger', trigger: 'system.manual' }],
    connections: [],
  });
  assert.equal(other.status, 201, other.text);
  otherId = other.body.data.id;
});
after(() => app?.close());

const oneStep = (
  context: string,
  action: string,
  config: Record<string, unknown>,
  trigger = 'system.manual',
  triggerConfig: Record<string, unknown> = {},
) => ({
  context,
  name: `One ${action}`,
  steps: [
    { key: 't', type: 'trigger', trigger, config: triggerConfig },
    { key: 'a', type: 'action', action, config },
  ],
  connections: [{ from: 't', to: 'a' }],
});

// A config of each action as a builder would fill it in, and a context it is valid in.
const samples = (): Record<string, [string, Record<string, unknown>]> => ({
  send_email: [
    'event',
    { type: 'template', template_id: templateId, to: '{{payload.email}}', subject: 'Hello', reply_to: ['a@acme.test'] },
  ],
  forward_email: ['email', { to: 'ops@acme.test', subject: 'Look' }],
  wait: ['contact', { seconds: 3600 }],
  condition: [
    'contact',
    {
      filter: {
        match: 'any',
        rules: [
          { field: 'first_name', operator: 'is_set' },
          { field: 'plan', operator: 'in', value: ['pro'] },
        ],
      },
    },
  ],
  experiment: [
    'event',
    {
      variants: [
        { key: 'a', weight: 1 },
        { key: 'b', weight: 2 },
      ],
      control: 'a',
    },
  ],
  call_webhook: [
    'event',
    { url: 'https://{{payload.host}}/hook', method: 'PUT', headers: { 'x-token': 'abc' }, body: { id: '{{run.id}}' } },
  ],
  run_automation: ['event', { automation_id: otherId }],
  end: ['event', {}],
  add_to_audience: ['contact', { audience_id: audienceId }],
  remove_from_audience: ['contact', { audience_id: audienceId }],
  edit_contact: [
    'contact',
    {
      fields: [
        { key: 'first_name', value: 'Ada' },
        { key: 'plan', value: 'pro' },
      ],
    },
  ],
  add_to_suppressions: ['event', { email: '{{payload.email}}', type: 'unsubscribe', reason: 'asked' }],
  remove_from_suppressions: ['event', { email: 'someone@example.com' }],
  create_contact: ['email', { first_name: 'Ada', audience_id: audienceId }],
});

test('the catalogue lists every trigger and action with contexts, branching and a config schema the checks agree with', async () => {
  const response = await app.api.get('/v2/automations/catalog');
  assert.equal(response.status, 200, response.text);
  const { contexts, triggers, actions } = response.body.data;
  assert.deepEqual(contexts, ['contact', 'email', 'event']);
  const byName = new Map<string, any>(actions.map((a: any) => [a.name, a]));
  assert.deepEqual([...byName.keys()].sort(), Object.keys(samples()).sort());
  assert.deepEqual(byName.get('forward_email').contexts, ['email', 'event']);
  assert.deepEqual(byName.get('edit_contact').contexts, ['contact']);
  assert.equal(byName.get('condition').branching, 'yes_no');
  assert.equal(byName.get('experiment').branching, 'variants');
  assert.equal(byName.get('end').branching, 'none');
  assert.equal(byName.get('send_email').branching, 'default');
  assert.deepEqual(byName.get('send_email').config.required, ['type', 'template_id']);
  assert.equal(byName.get('wait').config.properties.seconds.maximum, 2_592_000);
  for (const action of actions) assert.ok(action.title && action.description, `${action.name} has a title and a description`);

  const ajv = new Ajv({ strict: false, allErrors: true });
  for (const [name, [context, config]] of Object.entries(samples())) {
    const action = byName.get(name);
    assert.ok(action.contexts.includes(context), `${name} in ${context}`);
    assert.ok(ajv.validate(action.config, config), `${name}: the sample fits the catalogue's schema: ${ajv.errorsText()}`);
    const checked = await app.api.post('/v2/automations/validate', oneStep(context, name, config));
    assert.equal(checked.status, 200, checked.text);
    assert.deepEqual(checked.body.data, { valid: true, errors: {} }, `${name} passes the checks`);
  }
  // A value outside the schema is refused by the checks too.
  assert.equal(ajv.validate(byName.get('wait').config, { seconds: 2_592_001 }), false);
  const tooLong = await app.api.post('/v2/automations/validate', oneStep('event', 'wait', { seconds: 2_592_001 }));
  assert.deepEqual(tooLong.body.data.errors, { 'steps.1.config.seconds': ['The seconds is required: a whole number from 0 to 2592000.'] });

  const triggerByName = new Map<string, any>(triggers.map((t: any) => [t.name, t]));
  for (const name of ['contact.added_to_audience', 'contact.on_date', 'email.bounced', 'system.manual', 'event.*'])
    assert.ok(triggerByName.has(name), name);
  assert.deepEqual(triggerByName.get('contact.added_to_audience').contexts, ['contact']);
  assert.ok(triggerByName.get('contact.added_to_audience').config.properties.audience_id);
  assert.deepEqual(triggerByName.get('contact.on_date').config.required, ['date_field']);
  assert.equal(triggerByName.get('system.schedule').fires, false);
  assert.equal(triggerByName.get('email.bounced').fires, true);
  const filter = { match: 'all', rules: [{ field: 'first_name', operator: 'equals', value: 'Ada' }] };
  for (const [trigger, config] of [
    ['contact.added_to_audience', { audience_id: audienceId, filter }],
    ['contact.on_date', { date_field: 'renewal' }],
  ] as const) {
    assert.ok(ajv.validate(triggerByName.get(trigger).config, config), `${trigger}: ${ajv.errorsText()}`);
    const checked = await app.api.post('/v2/automations/validate', oneStep('contact', 'end', {}, trigger, config));
    assert.deepEqual(checked.body.data, { valid: true, errors: {} }, trigger);
  }
});

test('validate answers as start would, keyed by field path, and saves nothing', async () => {
  const broken: {
    context: string;
    name: string;
    steps: Array<{ key: string; type: string; trigger?: string; action?: string; config?: Record<string, unknown> }>;
    connections: Array<Record<string, string>>;
  } = {
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
      { key: 'm', type: 'action', action: 'send_email', config: { template_id: 'nope', from: 'someone@elsewhere.test' } },
    ],
    connections: [
      { from: 't', to: 'w' },
      { from: 'w', to: 'x' },
      { from: 'x', to: 'h', branch: 'a' },
      { from: 'x', to: 'm' },
    ],
  };
  const before = (await app.api.get('/v2/automations')).body.total_records;
  const checked = await app.api.post('/v2/automations/validate', broken);
  assert.equal(checked.status, 200, checked.text);
  assert.equal(checked.body.data.valid, false);
  assert.deepEqual(checked.body.data.errors, {
    'steps.1.config.seconds': ['The seconds is required: a whole number from 0 to 2592000.'],
    'steps.2.config.variants.1.key': ['Each variant needs a unique key (not default).'],
    'steps.2.config.variants.1.weight': ['The weight must be a number of at least 0.'],
    'steps.3.config.url': ['The url must be an http or https URL.'],
    'steps.3.config.method': ['The method must be one of GET, POST, PUT, PATCH, DELETE.'],
    'steps.4.config.from': ['The domain elsewhere.test is not a verified sending domain of the workspace.'],
    'steps.4.config.type': ['The type is required and must be template.'],
    'steps.4.config.template_id': ['No template version with this id and no published template with this alias exists.'],
    'steps.4.config.to': ['The to is required outside the contact context.'],
  });
  assert.equal((await app.api.get('/v2/automations')).body.total_records, before, 'nothing saved');

  // The same definition: create refuses only what a draft may not keep; start the rest, as validate said.
  const draft = await app.api.post('/v2/automations', broken);
  assert.equal(draft.status, 400);
  assert.deepEqual(draft.body.errors, {
    'steps.4.config.from': ['The domain elsewhere.test is not a verified sending domain of the workspace.'],
  });
  const { from: _from, ...withoutFrom } = broken.steps[4].config!;
  const saved = await app.api.post('/v2/automations', {
    ...broken,
    steps: [...broken.steps.slice(0, 4), { ...broken.steps[4], config: withoutFrom }],
  });
  assert.equal(saved.status, 201, saved.text);
  const started = await app.api.post(`/v2/automations/${saved.body.data.id}/start`);
  assert.equal(started.status, 400);
  const { 'steps.4.config.from': _fromProblem, ...rest } = checked.body.data.errors;
  assert.deepEqual(started.body.errors, rest);

  // Structure and fields too, every problem at once.
  const structure = await app.api.post('/v2/automations/validate', {
    name: '',
    context: 'contact',
    steps: [{ key: 'a', type: 'action', action: 'forward_email', config: { to: 'x@acme.test' } }],
    connections: [],
  });
  assert.equal(structure.body.data.valid, false);
  assert.deepEqual(Object.keys(structure.body.data.errors).sort(), ['name', 'steps', 'steps.0', 'steps.0.action'].sort());
  const noContext = await app.api.post('/v2/automations/validate', {});
  assert.deepEqual(noContext.body.data.errors, {
    context: ['The context is required: contact, email or event.'],
    name: ['The name field is required.'],
  });
});
