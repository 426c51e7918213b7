// The forms API over HTTP (https://emailit.com/docs/forms.md): create with the starter definition,
// retrieve, update, list, publish with its checks, unpublish, token rotation, delete and the list
// of a form's submissions; keys, scopes and workspaces kept apart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { MISSING_STEPS } from '../../src/resources/forms/definition.ts';
import { createLiveForm, solveProof, submitForm } from './helpers.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ env: { PUBLIC_URL: 'https://forms.example.net' } });
});
after(() => app.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const visitor = () => app.as(null);

test('create without a definition: a draft with the starter definition, a token, empty settings', async () => {
  const created = await app.api.post('/v2/forms', { name: 'Newsletter' });
  assert.equal(created.status, 201, created.text);
  const { id, token, created_at, updated_at, definition, ...rest } = created.body;
  assert.match(id, /^frm_[A-Za-z0-9]{27}$/);
  assert.match(token, /^[A-Za-z0-9]{32}$/);
  assert.match(created_at, ISO);
  assert.equal(updated_at, created_at);
  assert.deepEqual(rest, { object: 'form', name: 'Newsletter', type: 'popup', status: 'draft', published_at: null, settings: {} });
  assert.equal(definition.version, 1);
  assert.equal(definition.type, 'popup');
  const [form, success] = definition.steps;
  assert.deepEqual([form.kind, success.kind], ['form', 'success']);
  assert.deepEqual(
    form.blocks.map((b: any) => [b.type, b.level ?? b.name ?? b.action]),
    [
      ['text', 'heading'],
      ['email', 'email'],
      ['button', 'submit'],
    ],
  );
  assert.equal(form.blocks[1].required, true);
  assert.equal(form.blocks[2].label, 'Subscribe');

  const fetched = await app.api.get(`/v2/forms/${id}`);
  assert.equal(fetched.status, 200);
  assert.deepEqual(fetched.body, created.body);
});

test('create with a type and a definition: stored as given, definition.type made to match', async () => {
  const definition = { version: 1, type: 'banner', steps: [], builder: { zoom: 2 } };
  const created = await app.api.post('/v2/forms', { name: 'Sale', type: 'flyout', definition, settings: { owner: 'marketing' } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.type, 'flyout');
  assert.deepEqual(created.body.definition, { ...definition, type: 'flyout' });
  assert.deepEqual(created.body.settings, { owner: 'marketing' });
  // Without `type`, a valid definition.type is the form's type.
  const fromDefinition = await app.api.post('/v2/forms', { name: 'Inline', definition: { type: 'embed' } });
  assert.equal(fromDefinition.body.type, 'embed');
  const starter = await app.api.post('/v2/forms', { name: 'Full', type: 'full_page' });
  assert.equal(starter.body.definition.type, 'full_page');
});

test('create refuses a missing, empty or blank name and a bad type with the standard validation error', async () => {
  for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x', type: 'modal' }, { name: 'x', definition: 'text' }]) {
    const response = await app.api.post('/v2/forms', body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(response.body.statusCode, 400);
    assert.equal(response.body.error, 'Bad Request');
    assert.ok(Array.isArray(response.body.details) && response.body.details.length > 0);
  }
});

test('retrieve: 404 {error:"Form not found"} for an unknown id and for another workspace\'s form', async () => {
  const missing = await app.api.get('/v2/forms/frm_000000000000000000000000000');
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Form not found' }]);
  const other = await app.newWorkspace();
  const theirs = await other.api.post('/v2/forms', { name: 'Theirs' });
  const peek = await app.api.get(`/v2/forms/${theirs.body.id}`);
  assert.deepEqual([peek.status, peek.body], [404, { error: 'Form not found' }]);
  for (const [method, path] of [
    ['POST', ''],
    ['DELETE', ''],
    ['POST', '/publish'],
    ['POST', '/unpublish'],
    ['POST', '/rotate-token'],
    ['GET', '/submissions'],
  ]) {
    const response = await app.api.request(
      method,
      `/v2/forms/${theirs.body.id}${path}`,
      method === 'POST' && path === '' ? { name: 'Mine now' } : undefined,
    );
    assert.deepEqual([response.status, response.body], [404, { error: 'Form not found' }], `${method} ${path}`);
  }
  assert.equal((await other.api.get(`/v2/forms/${theirs.body.id}`)).body.name, 'Theirs');
});

test('the API needs a full key; a frm_ id without a key is 401, with a sending key 403', async () => {
  const created = await app.api.post('/v2/forms', { name: 'Keys' });
  const anonymous = await visitor().get(`/v2/forms/${created.body.id}`);
  assert.equal(anonymous.status, 401);
  assert.equal((await visitor().post('/v2/forms', { name: 'x' })).status, 401);
  assert.equal((await visitor().get('/v2/forms')).status, 401);
  const sending = await app.api.post('/v2/api-keys', { name: 'sender for forms', scope: 'sending' });
  const forbidden = await app.as(sending.body.key).get(`/v2/forms/${created.body.id}`);
  assert.equal(forbidden.status, 403);
  assert.equal((await app.as(sending.body.key).get('/v2/forms/embed')).status, 403);
});

test('update: an empty name is 400 {error:"Invalid name"}; type updates definition.type; definition and settings are replaced whole', async () => {
  const created = await app.api.post('/v2/forms', { name: 'Before', settings: { a: 1, b: 2 } });
  const id = created.body.id;
  for (const name of ['', '   ']) {
    const empty = await app.api.post(`/v2/forms/${id}`, { name });
    assert.deepEqual([empty.status, empty.body], [400, { error: 'Invalid name' }]);
  }
  for (const body of [{ name: 42 }, { type: 'modal' }, { settings: [] }]) {
    const wrong = await app.api.post(`/v2/forms/${id}`, body);
    assert.equal(wrong.status, 400, JSON.stringify(body));
    assert.ok(Array.isArray(wrong.body.details));
  }
  const renamed = await app.api.post(`/v2/forms/${id}`, { name: 'After', type: 'banner', settings: { c: 3 } });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.body.name, 'After');
  assert.equal(renamed.body.type, 'banner');
  assert.equal(renamed.body.definition.type, 'banner');
  assert.deepEqual(renamed.body.definition.steps, created.body.definition.steps);
  assert.deepEqual(renamed.body.settings, { c: 3 });
  assert.ok(renamed.body.updated_at > created.body.updated_at);

  const replaced = await app.api.post(`/v2/forms/${id}/update`, { definition: { version: 1, steps: [], notes: 'draft' } });
  assert.equal(replaced.status, 200, replaced.text);
  assert.deepEqual(replaced.body.definition, { version: 1, type: 'banner', steps: [], notes: 'draft' });
  assert.equal(replaced.body.status, 'draft');
  assert.deepEqual((await app.api.get(`/v2/forms/${id}`)).body, replaced.body);

  const nothing = await app.api.post(`/v2/forms/${id}`);
  assert.deepEqual([nothing.status, nothing.body], [200, replaced.body]);
  const missing = await app.api.post('/v2/forms/frm_000000000000000000000000000', { name: 'x' });
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Form not found' }]);
});

test('publish: 422 with a clear message without a form and a success step, or with words outside the vocabulary; then live with published_at', async () => {
  const created = await app.api.post('/v2/forms', {
    name: 'Incomplete',
    definition: { version: 1, steps: [{ id: 'a', kind: 'form', blocks: [] }] },
  });
  const incomplete = await app.api.post(`/v2/forms/${created.body.id}/publish`);
  assert.deepEqual([incomplete.status, incomplete.body], [422, { error: MISSING_STEPS }]);

  const definition = structuredClone((await app.api.post('/v2/forms', { name: 'tmp' })).body.definition);
  definition.steps[0].blocks[2].action = 'subscribe';
  definition.steps[0].blocks.push({ id: 'v', type: 'video', src: 'x' });
  await app.api.post(`/v2/forms/${created.body.id}`, { definition });
  const unknown = await app.api.post(`/v2/forms/${created.body.id}/publish`);
  assert.equal(unknown.status, 422);
  assert.match(unknown.body.error, /^The form cannot be published: /);
  assert.match(unknown.body.error, /steps\[0\]\.blocks\[2\]\.action must be one of submit, next, close, go_to_url/);
  assert.match(unknown.body.error, /steps\[0\]\.blocks\[3\]\.type must be one of/);
  assert.equal((await app.api.get(`/v2/forms/${created.body.id}`)).body.status, 'draft');

  const good = await app.api.post('/v2/forms', { name: 'Good' });
  const published = await app.api.post(`/v2/forms/${good.body.id}/publish`);
  assert.equal(published.status, 200);
  assert.equal(published.body.status, 'live');
  assert.match(published.body.published_at, ISO);
  assert.equal(published.body.updated_at, published.body.published_at);
  // Publishing again records the last publish.
  const again = await app.api.post(`/v2/forms/${good.body.id}/publish`);
  assert.ok(again.body.published_at > published.body.published_at);
  const missing = await app.api.post('/v2/forms/frm_000000000000000000000000000/publish');
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Form not found' }]);
});

test('a live form: updates are visible at once to the public load; an update it could not be published with is refused and changes nothing', async () => {
  const form = await createLiveForm(app.api, { name: 'Live' });
  const before = await app.api.get(`/v2/forms/${form.id}`);
  const definition = structuredClone(before.body.definition);
  definition.steps[0].blocks[0].content = 'Get 10% off';
  const updated = await app.api.post(`/v2/forms/${form.id}`, { definition });
  assert.equal(updated.status, 200);
  assert.equal(updated.body.status, 'live');
  const loaded = await visitor().get(`/v2/forms/${form.token}`);
  assert.equal(loaded.body.definition.steps[0].blocks[0].content, 'Get 10% off');

  const broken = { ...definition, steps: definition.steps.slice(0, 1) };
  const refused = await app.api.post(`/v2/forms/${form.id}`, { definition: broken, name: 'Renamed' });
  assert.deepEqual([refused.status, refused.body], [422, { error: MISSING_STEPS }]);
  assert.deepEqual((await app.api.get(`/v2/forms/${form.id}`)).body, updated.body);
});

test('unpublish: back to draft, the public load and submit stop at once; published_at keeps the last publish', async () => {
  const form = await createLiveForm(app.api, { name: 'Stop me' });
  const published = await app.api.get(`/v2/forms/${form.id}`);
  const loaded = await visitor().get(`/v2/forms/${form.token}`);
  assert.equal(loaded.status, 200);
  const unpublished = await app.api.post(`/v2/forms/${form.id}/unpublish`);
  assert.equal(unpublished.status, 200);
  assert.equal(unpublished.body.status, 'draft');
  assert.equal(unpublished.body.published_at, published.body.published_at);
  assert.deepEqual((await visitor().get(`/v2/forms/${form.token}`)).body, { error: 'Form not found' });
  // Even with a challenge solved while it was live, the submit is refused.
  const relive = await app.api.post(`/v2/forms/${form.id}/publish`);
  assert.equal(relive.status, 200);
  const fresh = await visitor().get(`/v2/forms/${form.token}`);
  await app.api.post(`/v2/forms/${form.id}/unpublish`);
  const refused = await visitor().post(`/v2/forms/${form.token}/submit`, {
    fields: { email: 'x@example.com' },
    proof: await solveProof(fresh.body.challenge),
  });
  assert.deepEqual([refused.status, refused.body], [404, { error: 'Form not found' }]);
  // Unpublishing a draft changes nothing.
  const twice = await app.api.post(`/v2/forms/${form.id}/unpublish`);
  assert.equal(twice.status, 200);
  assert.equal(twice.body.status, 'draft');
});

test('token rotation: a new token at once; the old one stops answering', async () => {
  const form = await createLiveForm(app.api, { name: 'Rotate' });
  const rotated = await app.api.post(`/v2/forms/${form.id}/rotate-token`);
  assert.equal(rotated.status, 200);
  assert.notEqual(rotated.body.token, form.token);
  assert.match(rotated.body.token, /^[A-Za-z0-9]{32}$/);
  assert.equal(rotated.body.status, 'live');
  assert.equal((await visitor().get(`/v2/forms/${form.token}`)).status, 404);
  assert.equal((await visitor().get(`/v2/forms/${rotated.body.token}`)).status, 200);
  const accepted = await submitForm(visitor(), rotated.body.token, { email: 'new@example.com' });
  assert.equal(accepted.status, 201);
});

test('delete: the form and its submissions are gone; its token stops answering', async () => {
  const form = await createLiveForm(app.api, { name: 'Doomed' });
  assert.equal((await submitForm(visitor(), form.token, { email: 'gone@example.com' })).status, 201);
  const deleted = await app.api.delete(`/v2/forms/${form.id}`);
  assert.deepEqual([deleted.status, deleted.body], [200, { object: 'form', id: form.id, deleted: true }]);
  assert.equal((await app.api.get(`/v2/forms/${form.id}`)).status, 404);
  assert.equal((await visitor().get(`/v2/forms/${form.token}`)).status, 404);
  const rows = await app.running.ctx.db.selectFrom('form_submissions').select('id').where('form_id', '=', form.id).execute();
  assert.deepEqual(rows, []);
  assert.deepEqual((await app.api.delete(`/v2/forms/${form.id}`)).body, { error: 'Form not found' });
});

test('list: items without definition and settings, total_records, search, filters, sort keys, paging', async () => {
  const { api } = await app.newWorkspace();
  const names = ['Alpha popup', 'Beta banner', 'Gamma popup', 'Delta embed'];
  const types = ['popup', 'banner', 'popup', 'embed'];
  const ids: string[] = [];
  for (const [i, name] of names.entries()) ids.push((await api.post('/v2/forms', { name, type: types[i] })).body.id);
  await api.post(`/v2/forms/${ids[1]}/publish`);

  const all = await api.get('/v2/forms');
  assert.equal(all.status, 200);
  assert.equal(all.body.total_records, 4);
  assert.deepEqual(
    all.body.data.map((f: any) => f.name),
    [...names].reverse(),
  ); // newest first
  assert.deepEqual(Object.keys(all.body.data[0]).sort(), [
    'created_at',
    'id',
    'name',
    'object',
    'published_at',
    'status',
    'token',
    'type',
    'updated_at',
  ]);
  assert.deepEqual([all.body.next_page_url, all.body.previous_page_url], [null, null]);

  const names_ = async (query: string) => (await api.get(`/v2/forms?${query}`)).body.data.map((f: any) => f.name);
  assert.deepEqual(await names_('search=POPUP'), ['Gamma popup', 'Alpha popup']);
  assert.deepEqual(await names_('type.exact=popup&order=name'), ['Alpha popup', 'Gamma popup']);
  assert.deepEqual(await names_('status.exact=live'), ['Beta banner']);
  assert.deepEqual(await names_('status.exact=draft&order=name&direction=desc'), ['Gamma popup', 'Delta embed', 'Alpha popup']);
  assert.deepEqual(await names_('name.starts_with=d'), ['Delta embed']);
  assert.deepEqual(await names_('type.in=banner,embed&order=type'), ['Beta banner', 'Delta embed']);
  assert.deepEqual(await names_('order=status&direction=desc&limit=1'), ['Beta banner']);
  assert.deepEqual(await names_(`created_at.after=2000-01-01&order=created_at`), names);
  assert.deepEqual(await names_('created_at.before=2000-01-01'), []);
  assert.deepEqual(await names_('type.exact=popup&name.exact=Beta banner&match=or&order=name'), [
    'Alpha popup',
    'Beta banner',
    'Gamma popup',
  ]);

  const page = await api.get('/v2/forms?limit=3&order=name');
  assert.equal(page.body.total_records, 4);
  assert.deepEqual(
    page.body.data.map((f: any) => f.name),
    ['Alpha popup', 'Beta banner', 'Delta embed'],
  );
  assert.equal(page.body.next_page_url, '/v2/forms?limit=3&order=name&page=2');
  const second = await api.get(page.body.next_page_url);
  assert.deepEqual(
    second.body.data.map((f: any) => f.name),
    ['Gamma popup'],
  );
  assert.equal(second.body.next_page_url, null);
  assert.equal(second.body.previous_page_url, '/v2/forms?limit=3&order=name&page=1');
  const filtered = await api.get('/v2/forms?type.exact=popup&limit=1');
  assert.equal(filtered.body.total_records, 2);
  for (const limit of [0, 101]) assert.equal((await api.get(`/v2/forms?limit=${limit}`)).status, 400);
  // An unknown sort key is ignored, as on every list: newest first.
  assert.deepEqual(await names_('order=token'), [...names].reverse());
});

test("submissions: a paged list of the form's fsub_ submissions with their fields, time and page; search and filters", async () => {
  const form = await createLiveForm(app.api, { name: 'Collecting' });
  for (const [i, email] of ['one@example.com', 'two@example.com', 'three@example.com'].entries()) {
    const sent = await submitForm(visitor(), form.token, { email }, { page_url: `https://shop.example/page-${i}` });
    assert.equal(sent.status, 201, sent.text);
  }
  const list = await app.api.get(`/v2/forms/${form.id}/submissions?limit=2`);
  assert.equal(list.status, 200);
  assert.equal(list.body.total_records, 3);
  assert.equal(list.body.data.length, 2);
  const [latest] = list.body.data;
  assert.match(latest.id, /^fsub_[A-Za-z0-9]{27}$/);
  assert.match(latest.created_at, ISO);
  assert.deepEqual(
    { ...latest, id: undefined, created_at: undefined },
    {
      object: 'form_submission',
      id: undefined,
      form_id: form.id,
      fields: { email: 'three@example.com' },
      page_url: 'https://shop.example/page-2',
      experiment_id: null,
      variant_id: null,
      created_at: undefined,
    },
  );
  assert.equal(list.body.next_page_url, `/v2/forms/${form.id}/submissions?limit=2&page=2`);
  const emails = async (query: string) =>
    (await app.api.get(`/v2/forms/${form.id}/submissions?${query}`)).body.data.map((s: any) => s.fields.email);
  assert.deepEqual(await emails('search=two@'), ['two@example.com']);
  assert.deepEqual(await emails('page_url.ends_with=page-0'), ['one@example.com']);
  assert.deepEqual(await emails('order=created_at'), ['one@example.com', 'two@example.com', 'three@example.com']);
  const missing = await app.api.get('/v2/forms/frm_000000000000000000000000000/submissions');
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Form not found' }]);
});

test('the embed script of the workspace: its URL under PUBLIC_URL, one key per workspace', async () => {
  const first = await app.api.get('/v2/forms/embed');
  assert.equal(first.status, 200);
  const { public_key, script_url, html, placeholder_html, object } = first.body;
  assert.equal(object, 'form_embed');
  assert.match(public_key, /^[A-Za-z0-9]{24}$/);
  assert.equal(script_url, `https://forms.example.net/js/${public_key}/postlane.js`);
  assert.equal(html, `<script async src="${script_url}"></script>`);
  assert.equal(placeholder_html, '<div data-postlane-form="FORM_TOKEN"></div>');
  assert.deepEqual((await app.api.get('/v2/forms/embed')).body, first.body);
  const other = await app.newWorkspace();
  assert.notEqual((await other.api.get('/v2/forms/embed')).body.public_key, public_key);
});
