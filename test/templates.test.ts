// Templates over HTTP (docs/api.md, "Templates and MJML"), plus resolveTemplateForSend, the lookup
// the sending code uses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp, type ApiClient } from './helpers/app.ts';
import { resolveTemplateForSend } from '../src/resources/templates/service.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const NOT_FOUND = { message: 'Template not found' };

async function workspace(): Promise<{ id: string; api: ApiClient }> {
  const { workspace, api } = await app.newWorkspace();
  return { id: workspace.id, api };
}

async function create(api: ApiClient, body: Record<string, unknown>) {
  const res = await api.post('/v2/templates', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

async function events(workspaceId: string) {
  const rows = await app.running.ctx.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('workspace_id', '=', workspaceId)
    .where('type', 'like', 'template.%')
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({ type: row.type, object: JSON.parse(row.data) }));
}

/** The standard validation error's shape, details reduced to what identifies them. */
function standardError(res: { status: number; body: any }) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.statusCode, 400);
  assert.equal(res.body.error, 'Bad Request');
  assert.equal(typeof res.body.message, 'string');
  assert.ok(Array.isArray(res.body.details) && res.body.details.length > 0);
  for (const d of res.body.details) assert.deepEqual(Object.keys(d).sort(), ['instancePath', 'keyword', 'message', 'params', 'schemaPath']);
  return res.body.details.map((d: any) => `${d.instancePath}:${d.keyword}`);
}

test('create: 201 {data, message}; the first version of an alias is published, later ones are drafts; template.created', async () => {
  const { id: ws, api } = await workspace();
  const res = await api.post('/v2/templates', {
    name: '  Welcome  ',
    alias: 'welcome',
    from: 'Acme <hello@acme.test>',
    subject: 'Hi {{first_name|"there"}}',
    reply_to: 'support@acme.test',
    html: '<p>Hello {{first_name}}</p>',
    text: 'Hello {{first_name}}',
  });
  assert.equal(res.status, 201);
  const first = res.body.data;
  assert.match(first.id, /^tem_[A-Za-z0-9]{27}$/);
  assert.match(first.created_at, ISO_MICROS);
  assert.deepEqual(res.body, {
    data: {
      object: 'template',
      id: first.id,
      name: 'Welcome',
      alias: 'welcome',
      from: 'Acme <hello@acme.test>',
      subject: 'Hi {{first_name|"there"}}',
      reply_to: ['support@acme.test'],
      html: '<p>Hello {{first_name}}</p>',
      text: 'Hello {{first_name}}',
      source: null,
      editor: 'html',
      published_at: first.created_at,
      preview_url: null,
      created_at: first.created_at,
      updated_at: first.created_at,
    },
    message: 'Template created successfully',
  });

  const draft = await create(api, {
    name: 'Welcome v2',
    alias: 'welcome',
    editor: 'tiptap',
    source: { type: 'doc', content: [] },
    reply_to: ['a@acme.test', 'B <b@acme.test>'],
  });
  assert.equal(draft.published_at, null);
  assert.equal(draft.editor, 'tiptap');
  assert.deepEqual(draft.source, { type: 'doc', content: [] }, 'an object source is stored and returned as is');
  assert.deepEqual(draft.reply_to, ['a@acme.test', 'B <b@acme.test>']);
  assert.equal(draft.html, null);

  const other = await create(api, { name: 'Other', alias: 'other', editor: 'text', text: 'plain' });
  assert.equal(other.published_at, other.created_at, 'a new alias starts published');

  assert.deepEqual(await events(ws), [
    {
      type: 'template.created',
      object: {
        id: first.id,
        object: 'template',
        name: 'Welcome',
        alias: 'welcome',
        from: 'Acme <hello@acme.test>',
        subject: 'Hi {{first_name|"there"}}',
        reply_to: ['support@acme.test'],
        html: '<p>Hello {{first_name}}</p>',
        text: 'Hello {{first_name}}',
        editor: 'html',
        published_at: first.created_at,
        created_at: first.created_at,
        updated_at: first.created_at,
      },
    },
    {
      type: 'template.created',
      object: { ...(await events(ws))[1].object, id: draft.id, published_at: null, reply_to: ['a@acme.test', 'B <b@acme.test>'] },
    },
    { type: 'template.created', object: { ...(await events(ws))[2].object, id: other.id, reply_to: [] } },
  ]);
});

test('create: field rules answer {message:"Validation failed", errors}; schema failures the standard 400', async () => {
  const { api } = await workspace();
  const fields = await api.post('/v2/templates', {
    name: 'x',
    alias: 'Bad Alias!',
    reply_to: ['ok@acme.test', 'nope'],
    from: 'not an address',
  });
  assert.equal(fields.status, 400);
  assert.deepEqual(fields.body, {
    message: 'Validation failed',
    errors: {
      alias: ['The alias may only contain lowercase letters, numbers, dashes and underscores.'],
      from: ['The from must be a valid email address, optionally with a display name ("Name <address>").'],
      reply_to: ['The reply_to address "nope" is not a valid email address.'],
    },
  });
  const blank = await api.post('/v2/templates', { name: '   ', alias: '' });
  assert.deepEqual(blank.body, {
    message: 'Validation failed',
    errors: { name: ['The name field is required.'], alias: ['The alias field is required.'] },
  });
  const replyString = await api.post('/v2/templates', { name: 'x', alias: 'x', reply_to: 'broken@' });
  assert.deepEqual(replyString.body.errors, { reply_to: ['The reply_to address "broken@" is not a valid email address.'] });
  const syntax = await api.post('/v2/templates', { name: 'x', alias: 'x', subject: 'Hi {{name', html: '{{#if a}}open' });
  assert.equal(syntax.status, 400);
  assert.deepEqual(Object.keys(syntax.body.errors).sort(), ['html', 'subject']);
  assert.match(syntax.body.errors.subject[0], /^Invalid variable syntax at line 1, column 4: /);
  assert.match(syntax.body.errors.html[0], /^Invalid variable syntax at line 1, column 1: /);

  assert.deepEqual(standardError(await api.post('/v2/templates', { alias: 'x' })), [':required']);
  assert.deepEqual(standardError(await api.post('/v2/templates', { name: 'x' })), [':required']);
  assert.deepEqual(standardError(await api.post('/v2/templates', { name: 'n'.repeat(192), alias: 'x' })), ['/name:maxLength']);
  assert.deepEqual(standardError(await api.post('/v2/templates', { name: 'x', alias: 'a'.repeat(192) })), ['/alias:maxLength']);
  assert.deepEqual(
    standardError(await api.post('/v2/templates', { name: 'x', alias: 'x', subject: 's'.repeat(192) })).at(0),
    '/subject:maxLength',
  );
  assert.deepEqual(
    standardError(await api.post('/v2/templates', { name: 'x', alias: 'x', from: 'f'.repeat(192) })).at(0),
    '/from:maxLength',
  );
  assert.ok(standardError(await api.post('/v2/templates', { name: 'x', alias: 'x', editor: 'word' })).includes('/editor:anyOf'));
  const ok = await api.post('/v2/templates', { name: 'n'.repeat(191), alias: 'a'.repeat(191), subject: 's'.repeat(191) });
  assert.equal(ok.status, 201, '191 characters are allowed');
  const badJson = await api.post('/v2/templates', '{"name":');
  assert.deepEqual(badJson.body, { statusCode: 400, error: 'Bad Request', message: 'Invalid JSON in request body' });
});

test('retrieve: by id only, with the other versions of the alias newest first; 404 {message}', async () => {
  const { api } = await workspace();
  const v1 = await create(api, { name: 'v1', alias: 'receipt' });
  const v2 = await create(api, { name: 'v2', alias: 'receipt' });
  const v3 = await create(api, { name: 'v3', alias: 'receipt' });
  await create(api, { name: 'unrelated', alias: 'unrelated' });
  const res = await api.get(`/v2/templates/${v2.id}`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    data: {
      ...v2,
      versions: [v3, v1].map((v) => ({
        id: v.id,
        name: v.name,
        published_at: v.published_at,
        created_at: v.created_at,
        updated_at: v.updated_at,
      })),
    },
  });

  for (const path of ['/v2/templates/receipt', '/v2/templates/tem_000000000000000000000000000', `/v2/templates/${v1.id}x`]) {
    const missing = await api.get(path);
    assert.equal(missing.status, 404, path);
    assert.deepEqual(missing.body, NOT_FOUND);
  }
  const stranger = await workspace();
  assert.deepEqual((await stranger.api.get(`/v2/templates/${v1.id}`)).body, NOT_FOUND, "another workspace's template does not exist");
});

test('publish: one published version per alias; publish state otherwise never changes; events', async () => {
  const { id: ws, api } = await workspace();
  const v1 = await create(api, { name: 'v1', alias: 'news' });
  const v2 = await create(api, { name: 'v2', alias: 'news' });
  const res = await api.post(`/v2/templates/${v2.id}/publish`);
  assert.equal(res.status, 200);
  assert.equal(res.body.message, 'Template published successfully');
  assert.equal(res.body.data.id, v2.id);
  assert.match(res.body.data.published_at, ISO_MICROS);
  assert.equal(res.body.data.updated_at, res.body.data.published_at);
  assert.equal((await api.get(`/v2/templates/${v1.id}`)).body.data.published_at, null);

  const again = await api.post(`/v2/templates/${v2.id}/publish`, {});
  assert.equal(again.status, 200);
  assert.equal(again.body.data.published_at, res.body.data.published_at, 'publishing the published version changes nothing');

  // Updates keep the state: the draft stays a draft, the published stays published.
  assert.equal((await api.post(`/v2/templates/${v1.id}`, { name: 'v1 edited' })).body.data.published_at, null);
  assert.equal((await api.post(`/v2/templates/${v2.id}`, { html: '<p>x</p>' })).body.data.published_at, res.body.data.published_at);

  const published = (await events(ws)).filter((e) => e.type === 'template.updated').slice(0, 2);
  assert.deepEqual(
    published.map((e) => [e.object.id, e.object.published_at]),
    [
      [v1.id, null],
      [v2.id, res.body.data.published_at],
    ],
    'publishing emits template.updated for the version unpublished and the one published',
  );

  assert.deepEqual((await api.post('/v2/templates/tem_000000000000000000000000000/publish')).body, NOT_FOUND);
  const rows = await app.running.ctx.db
    .selectFrom('templates')
    .select('id')
    .where('workspace_id', '=', ws)
    .where('published_at', 'is not', null)
    .execute();
  assert.deepEqual(
    rows.map((r) => r.id),
    [v2.id],
  );
});

test('concurrent publishes and creates leave exactly one published version per alias', async () => {
  const { id: ws, api } = await workspace();
  const created = await Promise.all(Array.from({ length: 6 }, (_, i) => api.post('/v2/templates', { name: `c${i}`, alias: 'race' })));
  assert.deepEqual(
    created.map((r) => r.status),
    Array(6).fill(201),
    JSON.stringify(created.map((r) => r.body)),
  );
  assert.equal(created.filter((r) => r.body.data.published_at !== null).length, 1);
  const ids = created.map((r) => r.body.data.id);
  const published = await Promise.all(ids.map((id) => api.post(`/v2/templates/${id}/publish`)));
  assert.deepEqual(
    published.map((r) => r.status),
    Array(6).fill(200),
    JSON.stringify(published.map((r) => r.body)),
  );
  const rows = await app.running.ctx.db
    .selectFrom('templates')
    .select('id')
    .where('workspace_id', '=', ws)
    .where('published_at', 'is not', null)
    .execute();
  assert.equal(rows.length, 1);
});

test('update: only sent fields change; empty string clears from, subject, reply_to; alias rules; template.updated', async () => {
  const { id: ws, api } = await workspace();
  const t = await create(api, {
    name: 'Invoice',
    alias: 'invoice',
    from: 'billing@acme.test',
    subject: 'Your invoice',
    reply_to: ['a@acme.test'],
    html: '<p>1</p>',
    text: 'one',
  });
  await create(api, { name: 'Taken', alias: 'taken' });
  const draft = await create(api, { name: 'Invoice v2', alias: 'invoice' });

  const res = await api.post(`/v2/templates/${t.id}`, { name: 'Invoice (new)', from: '', subject: '', reply_to: '' });
  assert.equal(res.status, 200);
  assert.equal(res.body.message, 'Template updated successfully');
  assert.match(res.body.data.updated_at, ISO_MICROS);
  assert.ok(res.body.data.updated_at > t.updated_at);
  assert.deepEqual(res.body.data, {
    ...t,
    name: 'Invoice (new)',
    from: null,
    subject: null,
    reply_to: null,
    updated_at: res.body.data.updated_at,
  });

  const last = (await events(ws)).at(-1)!;
  assert.equal(last.type, 'template.updated');
  assert.deepEqual(last.object, {
    id: t.id,
    object: 'template',
    name: 'Invoice (new)',
    alias: 'invoice',
    from: null,
    subject: null,
    reply_to: [],
    html: '<p>1</p>',
    text: 'one',
    editor: 'html',
    published_at: t.published_at,
    created_at: t.created_at,
    updated_at: res.body.data.updated_at,
  });

  const taken = await api.post(`/v2/templates/${t.id}`, { alias: 'taken' });
  assert.equal(taken.status, 400);
  assert.deepEqual(taken.body, { message: 'Validation failed', errors: { alias: ['The alias has already been taken.'] } });
  const sameAlias = await api.post(`/v2/templates/${t.id}`, { alias: 'invoice' });
  assert.equal(sameAlias.status, 200, 'its own alias is not "taken"');
  assert.deepEqual((await api.post(`/v2/templates/${t.id}`, { alias: 'UPPER' })).body.errors, {
    alias: ['The alias may only contain lowercase letters, numbers, dashes and underscores.'],
  });
  assert.deepEqual((await api.post(`/v2/templates/${t.id}`, { reply_to: ['x'] })).body.errors, {
    reply_to: ['The reply_to address "x" is not a valid email address.'],
  });

  // Moving a version to a new alias takes its publish state along.
  const moved = await api.post(`/v2/templates/${draft.id}`, { alias: 'invoice-b' });
  assert.equal(moved.status, 200);
  assert.equal(moved.body.data.alias, 'invoice-b');
  assert.equal(moved.body.data.published_at, null);

  assert.ok(standardError(await api.post(`/v2/templates/${t.id}`, { subject: 'x'.repeat(192) })).includes('/subject:maxLength'));
  assert.ok(standardError(await api.post(`/v2/templates/${t.id}`, { editor: 'word' })).includes('/editor:anyOf'));
  assert.ok(standardError(await api.post(`/v2/templates/${t.id}`, { name: 'n'.repeat(192) })).includes('/name:maxLength'));
  assert.deepEqual((await api.post('/v2/templates/tem_000000000000000000000000000', { name: 'x' })).body, NOT_FOUND);
  assert.equal((await api.post('/v2/templates/tem_000000000000000000000000000', { name: 'x' })).status, 404);

  const before = (await events(ws)).length;
  const unchanged = await api.post(`/v2/templates/${t.id}`, { name: 'Invoice (new)' });
  assert.equal(unchanged.status, 200);
  assert.equal((await events(ws)).length, before, 'an update that changes nothing emits nothing');
});

test('delete: permanent; the alias has no published version until another is published; template.deleted', async () => {
  const { id: ws, api } = await workspace();
  const v1 = await create(api, { name: 'v1', alias: 'promo' });
  const v2 = await create(api, { name: 'v2', alias: 'promo' });
  const res = await api.delete(`/v2/templates/${v1.id}`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    data: { object: 'template', id: v1.id, name: 'v1', alias: 'promo', deleted: true },
    message: 'Template deleted successfully',
  });
  assert.deepEqual((await api.get(`/v2/templates/${v1.id}`)).body, NOT_FOUND);
  assert.equal((await api.delete(`/v2/templates/${v1.id}`)).status, 404);
  assert.deepEqual((await api.get(`/v2/templates/${v2.id}`)).body.data.versions, []);
  assert.equal((await api.get('/v2/templates?filter[alias]=promo')).body.total_records, 0);
  assert.equal(await resolveTemplateForSend(app.running.ctx.db, ws, 'promo'), null);
  await api.post(`/v2/templates/${v2.id}/publish`);
  assert.equal((await resolveTemplateForSend(app.running.ctx.db, ws, 'promo'))?.id, v2.id);
  const deleted = (await events(ws)).find((e) => e.type === 'template.deleted')!;
  assert.equal(deleted.object.id, v1.id);
  assert.equal(deleted.object.published_at, v1.published_at, 'the object as it was');
});

test('list: the published version of each alias with total_versions; filters, match, sort, per_page paging', async () => {
  const { api } = await workspace();
  const welcome = await create(api, { name: 'Welcome Email', alias: 'welcome', html: '<p>w</p>', text: 'w' });
  await create(api, { name: 'Welcome draft', alias: 'welcome' });
  await create(api, { name: 'Welcome draft 2', alias: 'welcome' });
  const reset = await create(api, { name: 'Password reset', alias: 'reset-password', editor: 'text', text: 'r' });
  const digest = await create(api, { name: 'Weekly digest', alias: 'digest', editor: 'tiptap', source: 'doc' });
  const zeta = await create(api, { name: 'zeta', alias: 'a-first' });

  const all = await api.get('/v2/templates');
  assert.equal(all.status, 200);
  assert.deepEqual(Object.keys(all.body).sort(), [
    'current_page',
    'data',
    'next_page_url',
    'per_page',
    'previous_page_url',
    'total_pages',
    'total_records',
  ]);
  assert.deepEqual([all.body.next_page_url, all.body.previous_page_url], [null, null], 'one page: no links');
  assert.deepEqual(
    all.body.data.map((t: any) => t.id),
    [zeta.id, digest.id, reset.id, welcome.id],
    'newest first',
  );
  const first = all.body.data.at(-1);
  assert.deepEqual(first, {
    object: 'template',
    id: welcome.id,
    name: 'Welcome Email',
    alias: 'welcome',
    from: null,
    subject: null,
    reply_to: null,
    editor: 'html',
    published_at: welcome.published_at,
    preview_url: null,
    created_at: welcome.created_at,
    updated_at: welcome.updated_at,
    total_versions: 3,
  });
  assert.deepEqual([all.body.total_records, all.body.per_page, all.body.current_page, all.body.total_pages], [4, 25, 1, 1]);

  const content = await api.get('/v2/templates?include_content=true&filter[alias]=welcome');
  assert.deepEqual(content.body.data, [{ ...first, html: '<p>w</p>', text: 'w', source: null }]);

  const ids = async (query: string) => {
    const res = await api.get(`/v2/templates?${query}`);
    assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    return res.body.data.map((t: any) => t.name);
  };
  assert.deepEqual(await ids('filter[name]=WE'), ['Weekly digest', 'Welcome Email'], 'partial and case-insensitive on the name');
  assert.deepEqual(await ids('filter[name]=PASSWORD'), ['Password reset']);
  assert.deepEqual(await ids('filter[name]=reset-pass'), ['Password reset'], 'or on the alias');
  assert.deepEqual(await ids('filter[name]=%25'), [], 'LIKE wildcards are literal');
  assert.deepEqual(await ids('filter[alias]=welc'), [], 'alias is exact');
  assert.deepEqual(await ids('filter[alias]=digest'), ['Weekly digest']);
  assert.deepEqual(await ids('filter[editor]=text'), ['Password reset']);
  assert.deepEqual(await ids('filter[editor]=text&filter[alias]=digest'), []);
  assert.deepEqual(await ids('filter[editor]=text&filter[alias]=digest&match=or'), ['Weekly digest', 'Password reset']);
  assert.deepEqual(await ids('sort=name&order=asc'), ['Password reset', 'Weekly digest', 'Welcome Email', 'zeta']);
  assert.deepEqual(await ids('sort=name'), ['zeta', 'Welcome Email', 'Weekly digest', 'Password reset'], 'descending by default');
  assert.deepEqual(await ids('sort=alias&order=asc'), ['zeta', 'Weekly digest', 'Password reset', 'Welcome Email']);
  assert.deepEqual(await ids('order=asc'), ['Welcome Email', 'Password reset', 'Weekly digest', 'zeta'], 'created_at ascending');
  assert.deepEqual(
    await ids('name.starts_with=we&sort=created_at&order=asc'),
    ['Welcome Email', 'Weekly digest'],
    'the key.condition grammar works too',
  );

  const page2 = await api.get('/v2/templates?per_page=3&page=2');
  assert.deepEqual(
    {
      names: page2.body.data.map((t: any) => t.name),
      total_records: page2.body.total_records,
      per_page: page2.body.per_page,
      current_page: page2.body.current_page,
      total_pages: page2.body.total_pages,
    },
    { names: ['Welcome Email'], total_records: 4, per_page: 3, current_page: 2, total_pages: 2 },
  );
  // The page URLs the official SDK follows: every other parameter kept, the page replaced.
  assert.equal(page2.body.previous_page_url, '/v2/templates?per_page=3&page=1');
  assert.equal(page2.body.next_page_url, null);
  const page1 = await api.get(page2.body.previous_page_url);
  assert.deepEqual(
    page1.body.data.map((t: any) => t.name),
    ['zeta', 'Weekly digest', 'Password reset'],
  );
  assert.equal(page1.body.next_page_url, '/v2/templates?per_page=3&page=2');
  assert.deepEqual((await api.get('/v2/templates?page=9')).body.data, []);
  for (const bad of ['per_page=0', 'per_page=101', 'page=0', 'sort=subject', 'order=up', 'filter[editor]=word']) {
    standardError(await api.get(`/v2/templates?${bad}`));
  }
});

test('resolveTemplateForSend: a tem_ id is that exact version, an alias its published version', async () => {
  const { id: ws, api } = await workspace();
  const v1 = await create(api, { name: 'v1', alias: 'order', subject: 'one' });
  const v2 = await create(api, { name: 'v2', alias: 'order', subject: 'two' });
  const db = app.running.ctx.db;
  assert.equal((await resolveTemplateForSend(db, ws, 'order'))?.subject, 'one');
  assert.equal((await resolveTemplateForSend(db, ws, v2.id))?.subject, 'two', 'drafts are reachable by id');
  assert.deepEqual(await resolveTemplateForSend(db, ws, v1.id), { ...v1 });
  assert.equal(await resolveTemplateForSend(db, ws, 'nothing'), null);
  const stranger = await workspace();
  assert.equal(await resolveTemplateForSend(db, stranger.id, v1.id), null);
  assert.equal(await resolveTemplateForSend(db, stranger.id, 'order'), null);
});

test('scope: templates need a full key', async () => {
  const created = await app.api.post('/v2/api-keys', { name: 'sender', scope: 'sending' });
  assert.equal(created.status, 201);
  const sending = app.as(created.body.key);
  for (const res of [await sending.get('/v2/templates'), await sending.post('/v2/templates', { name: 'x', alias: 'x' })]) {
    assert.equal(res.status, 403);
    assert.equal(res.body.error, 'Forbidden');
  }
  assert.equal((await app.as(null).get('/v2/templates')).status, 401);
});
