// The campaigns API over HTTP (https://emailit.com/docs/api-reference/campaigns.md): create,
// retrieve by id or name, update with the recipients rules, list, state changes, events.
// Every response is checked against /openapi.json by the api client.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp, type ApiClient } from '../helpers/app.ts';
import { checkEventPayload } from '../../src/resources/events/payloads.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

async function workspace() {
  const { workspace, api } = await app.newWorkspace();
  return { id: workspace.id, api };
}

async function audience(api: ApiClient, name: string): Promise<string> {
  const res = await api.post('/v2/audiences', { name });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

async function events(workspaceId: string) {
  const rows = await app.running.ctx.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('workspace_id', '=', workspaceId)
    .where('type', 'like', 'campaign.%')
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({ type: row.type, object: JSON.parse(row.data) }));
}

test('create: 201 draft, empty strings until set, content_type inferred, body never echoed, no scheduled_at/sent_at/recipients', async () => {
  const { id, api } = await workspace();
  const res = await api.post('/v2/campaigns', { name: 'Spring sale', html: '<p>Hi {{first_name}}</p>', content: { blocks: [1] } });
  assert.equal(res.status, 201, res.text);
  const c = res.body;
  assert.match(c.id, /^cmp_[A-Za-z0-9]{27}$/);
  assert.equal(c.object, 'campaign');
  assert.equal(c.status, 'draft');
  assert.equal(c.subject, '');
  assert.equal(c.from_email, '');
  assert.equal(c.from_name, '');
  assert.equal(c.reply_to, '');
  assert.equal(c.preview_text, null);
  assert.equal(c.content_type, 'html');
  for (const hidden of ['html', 'text', 'content', 'scheduled_at', 'sent_at', 'recipients'])
    assert.ok(!(hidden in c), `${hidden} not in the create response`);

  const textOnly = await api.post('/v2/campaigns', { name: 'Plain', text: 'Hello' });
  assert.equal(textOnly.body.content_type, 'text');
  const mjml = await api.post('/v2/campaigns', { name: 'M', content_type: 'mjml', content: '<mjml></mjml>' });
  assert.equal(mjml.body.content_type, 'mjml');

  const missing = await api.post('/v2/campaigns', { subject: 'x' });
  assert.equal(missing.status, 400);
  const bad = await api.post('/v2/campaigns', { name: 'x', content_type: 'pdf' });
  assert.equal(bad.status, 400);

  const created = (await events(id)).filter((e) => e.type === 'campaign.created');
  assert.equal(created.length, 3);
  assert.deepEqual(checkEventPayload('campaign.created', created[0].object), []);
  assert.equal(created[0].object.status, 'draft');
  assert.equal(created[0].object.from_email, '');
});

test('retrieve by id or URL-encoded name; 404 {error:"Campaign not found"}; other workspaces cannot see it', async () => {
  const { api } = await workspace();
  const other = await workspace();
  const c = (await api.post('/v2/campaigns', { name: 'News & notes / May', subject: 'Hello' })).body;
  const byId = await api.get(`/v2/campaigns/${c.id}`);
  assert.equal(byId.status, 200);
  assert.equal(byId.body.scheduled_at, null);
  assert.equal(byId.body.sent_at, null);
  assert.deepEqual(byId.body.recipients, []);
  assert.ok(!('html' in byId.body));
  const byName = await api.get(`/v2/campaigns/${encodeURIComponent('News & notes / May')}`);
  assert.equal(byName.status, 200, byName.text);
  assert.equal(byName.body.id, c.id);
  const missing = await api.get('/v2/campaigns/cmp_000000000000000000000000000');
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { error: 'Campaign not found' });
  assert.equal((await other.api.get(`/v2/campaigns/${c.id}`)).status, 404);
});

test('update: given fields only, html/text and unknown fields ignored, recipients replaced (duplicates dropped) with 422 rules', async () => {
  const { id, api } = await workspace();
  const other = await workspace();
  const a = await audience(api, 'A');
  const b = await audience(api, 'B');
  const foreign = await audience(other.api, 'F');
  const c = (await api.post('/v2/campaigns', { name: 'C', html: '<p>original</p>' })).body;

  const res = await api.post(`/v2/campaigns/${c.id}`, {
    subject: 'Hi {{first_name}}',
    from_email: 'news@acme.test',
    from_name: 'Acme',
    html: '<p>changed</p>',
    bogus: 1,
    recipients: [{ audience_id: a }, { audience_id: a, exclude: false }, { audience_id: b, exclude: true }],
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.subject, 'Hi {{first_name}}');
  assert.equal(res.body.from_email, 'news@acme.test');
  assert.equal(res.body.name, 'C');
  assert.deepEqual(res.body.recipients, [
    { audience_id: a, exclude: false },
    { audience_id: b, exclude: true },
  ]);
  const stored = await app.running.ctx.db.selectFrom('campaigns').select('html').where('id', '=', c.id).executeTakeFirstOrThrow();
  assert.equal(stored.html, '<p>original</p>', 'html cannot be changed');

  for (const [recipients, pattern] of [
    [[{ audience_id: b, exclude: true }], /included/],
    [[], /included/],
    [[{ audience_id: foreign }], /does not exist/],
    [[{ exclude: false }], /audience_id is required/],
  ] as const) {
    const refused = await api.post(`/v2/campaigns/${c.id}`, { recipients });
    assert.equal(refused.status, 422, JSON.stringify(recipients));
    assert.equal(typeof refused.body.message, 'string');
    assert.ok(
      refused.body.errors.recipients.some((m: string) => pattern.test(m)),
      refused.text,
    );
  }
  assert.equal((await api.post('/v2/campaigns/cmp_000000000000000000000000000', { name: 'x' })).status, 404);

  const updated = (await events(id)).filter((e) => e.type === 'campaign.updated');
  assert.equal(updated.length, 1, 'refused updates emit nothing');
  assert.deepEqual(checkEventPayload('campaign.updated', updated[0].object), []);
});

test('list: status (sending matches queued; all; archived only when asked), search, sort, filters, total_records, page URLs with page and limit only', async () => {
  const { api } = await workspace();
  const made: Record<string, string> = {};
  for (const [name, subject] of [
    ['Alpha', 'Welcome'],
    ['Bravo', 'Deals'],
    ['Charlie', 'Welcome back'],
    ['Delta', 'News'],
  ]) {
    made[name] = (await api.post('/v2/campaigns', { name, subject })).body.id;
  }
  const db = app.running.ctx.db;
  await db.updateTable('campaigns').set({ status: 'queued' }).where('id', '=', made.Bravo).execute();
  await db
    .updateTable('campaigns')
    .set({ status: 'sending', sent_at: '2026-01-02T00:00:00.000000Z' })
    .where('id', '=', made.Charlie)
    .execute();
  await db.updateTable('campaigns').set({ status: 'archived' }).where('id', '=', made.Delta).execute();

  const names = (res: { body: { data: Array<{ name: string }> } }) => res.body.data.map((c) => c.name);
  const all = await api.get('/v2/campaigns');
  assert.equal(all.status, 200);
  assert.deepEqual(names(all), ['Charlie', 'Bravo', 'Alpha'], 'newest first, archived left out');
  assert.equal(all.body.total_records, 3);
  for (const hidden of ['reply_to', 'preview_text', 'content_type', 'recipients', 'html']) assert.ok(!(hidden in all.body.data[0]), hidden);
  assert.ok('sent_at' in all.body.data[0] && 'scheduled_at' in all.body.data[0]);

  assert.deepEqual(names(await api.get('/v2/campaigns?status=sending')).sort(), ['Bravo', 'Charlie']);
  assert.deepEqual(names(await api.get('/v2/campaigns?status=archived')), ['Delta']);
  assert.equal((await api.get('/v2/campaigns?status=all')).body.total_records, 4);
  assert.deepEqual(names(await api.get('/v2/campaigns?search=welcome&order=name')), ['Alpha', 'Charlie']);
  assert.deepEqual(names(await api.get('/v2/campaigns?order=name&direction=desc')), ['Charlie', 'Bravo', 'Alpha']);
  assert.deepEqual(names(await api.get('/v2/campaigns?subject.starts_with=deal')), ['Bravo']);
  assert.deepEqual(names(await api.get('/v2/campaigns?status.exact=draft')), ['Alpha']);
  assert.deepEqual(names(await api.get('/v2/campaigns?sent_at.after=2026-01-01')), ['Charlie']);

  const page1 = await api.get('/v2/campaigns?limit=2&search=a&status=all&order=name');
  assert.equal(page1.body.total_records, 4);
  assert.deepEqual(names(page1), ['Alpha', 'Bravo']);
  assert.equal(page1.body.next_page_url, '/v2/campaigns?page=2&limit=2');
  assert.equal(page1.body.previous_page_url, null);
  assert.equal((await api.get('/v2/campaigns?limit=101')).status, 400);
});

test('delete only what was not sent; cancel a draft but not a scheduled one; archive; pause/resume only while sending', async () => {
  const { id, api } = await workspace();
  const db = app.running.ctx.db;
  const make = async (name: string) => (await api.post('/v2/campaigns', { name })).body.id as string;

  const draft = await make('draft');
  const del = await api.delete(`/v2/campaigns/${draft}`);
  assert.equal(del.status, 200);
  assert.deepEqual(del.body, { object: 'campaign', id: draft, deleted: true });
  assert.equal((await api.get(`/v2/campaigns/${draft}`)).status, 404);

  const sent = await make('sent');
  await db.updateTable('campaigns').set({ status: 'sent', sent_at: '2026-01-01T00:00:00.000000Z' }).where('id', '=', sent).execute();
  const refusedDelete = await api.delete(`/v2/campaigns/${sent}`);
  assert.equal(refusedDelete.status, 409);
  assert.match(refusedDelete.body.message, /archive/);
  assert.equal((await api.post(`/v2/campaigns/${sent}/cancel`)).status, 409);
  assert.equal((await api.post(`/v2/campaigns/${sent}/pause`)).status, 409);
  const archived = await api.post(`/v2/campaigns/${sent}/archive`);
  assert.equal(archived.status, 200);
  assert.equal(archived.body.status, 'archived');

  const scheduled = await make('scheduled');
  await db
    .updateTable('campaigns')
    .set({ status: 'scheduled', scheduled_at: '2099-01-01T00:00:00.000000Z' })
    .where('id', '=', scheduled)
    .execute();
  const refusedCancel = await api.post(`/v2/campaigns/${scheduled}/cancel`);
  assert.equal(refusedCancel.status, 409);
  assert.match(refusedCancel.body.message, /delete/);
  assert.equal((await api.delete(`/v2/campaigns/${scheduled}`)).status, 200, 'a scheduled campaign is deleted to stop it');

  const other = await make('other');
  const canceled = await api.post(`/v2/campaigns/${other}/cancel`);
  assert.equal(canceled.status, 200);
  assert.equal(canceled.body.status, 'canceled');
  assert.equal((await api.post(`/v2/campaigns/${other}/resume`)).status, 409);
  assert.equal(
    (await api.post(`/v2/campaigns/${other}`, { subject: 'late' })).status,
    409,
    'only a draft, scheduled or paused campaign is edited',
  );
  assert.equal((await api.post(`/v2/campaigns/${other}`, { name: 'renamed' })).status, 200);
  assert.equal((await api.post('/v2/campaigns/cmp_000000000000000000000000000/cancel')).status, 404);

  const types = (await events(id)).map((e) => e.type);
  for (const type of ['campaign.deleted', 'campaign.archived', 'campaign.canceled']) assert.ok(types.includes(type), type);
  for (const e of await events(id)) assert.deepEqual(checkEventPayload(e.type, e.object), [], e.type);
});

test('send needs a verified workspace (403) and a full key (403 for a sending key)', async () => {
  const { api, workspace: ws } = await app.newWorkspace({ verified: false });
  const c = (await api.post('/v2/campaigns', { name: 'x' })).body;
  const res = await api.post(`/v2/campaigns/${c.id}/send`, {});
  assert.equal(res.status, 403);
  assert.match(res.body.message, /verified/);
  const key = await app.api.post('/v2/api-keys', { name: 'sender', scope: 'sending' });
  assert.equal(key.status, 201, key.text);
  const sendingKey = app.as(key.body.key);
  const mine = (await app.api.post('/v2/campaigns', { name: 'y' })).body;
  const refused = await sendingKey.post(`/v2/campaigns/${mine.id}/send`, {});
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, 'Forbidden');
  void ws;
});
