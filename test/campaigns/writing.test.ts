// Postlane's routes for writing campaigns, over HTTP against a real SMTP sink: the stored body
// (GET /campaigns/{id}/content), duplicate, test sends (merge tags from the contact or the
// address alone, defaults applied, "[Test] " subject, limits), the block editor's MJML compile,
// and a real send applying {{first_name|"there"}} to a contact without a first name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DeliveryApp } from '../emails/delivery/helpers.ts';
import { audience, contact, readyCampaign, startCampaignApp, waitForCampaign } from './helpers.ts';

let app: DeliveryApp;
before(async () => {
  app = await startCampaignApp();
});
after(() => app.close());

const BODY = {
  subject: 'Hi {{first_name|"friend"}}',
  html: '<p>Hello {{first_name|"there"}},</p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>',
  text: 'Hello {{first_name|"there"}}. Unsubscribe: {{unsubscribe_url}}',
  content_type: 'mjml',
  content: { version: 1, blocks: [{ type: 'text', text: 'Hello {{first_name|"there"}},' }] },
};
const to = (address: string) => app.sink.messages.filter((m) => m.rcptTo.includes(address));

test('content: the body as stored, content objects back as objects; 404 elsewhere; campaign objects still never echo it', async () => {
  const created = await app.api.post('/v2/campaigns', { name: 'Content', ...BODY });
  assert.equal(created.status, 201, created.text);
  const res = await app.api.get(`/v2/campaigns/${created.body.id}/content`);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, {
    object: 'campaign_content',
    id: created.body.id,
    content_type: 'mjml',
    html: BODY.html,
    text: BODY.text,
    content: BODY.content,
  });
  assert.ok(!('html' in (await app.api.get(`/v2/campaigns/${created.body.id}`)).body));
  const plain = (await app.api.post('/v2/campaigns', { name: 'Plain', text: 'Hi' })).body;
  assert.deepEqual((await app.api.get(`/v2/campaigns/${plain.id}/content`)).body, {
    object: 'campaign_content',
    id: plain.id,
    content_type: 'text',
    html: null,
    text: 'Hi',
    content: null,
  });
  const other = await app.newWorkspace();
  assert.equal((await other.api.get(`/v2/campaigns/${created.body.id}/content`)).status, 404);
});

test('duplicate: a new draft with settings, audiences and body, campaign.created; sent campaigns too', async () => {
  const list = await audience(app.api, 'Dup list');
  await contact(app.api, { email: 'dup-ann@example.org', first_name: 'Ann', audiences: [list] });
  const id = await readyCampaign(app.api, [list], [], { ...BODY, name: 'Dup source', preview_text: 'Peek' });
  assert.equal((await app.api.post(`/v2/campaigns/${id}/send`, {})).status, 200);
  await waitForCampaign(app.api, id, 'sent');

  const res = await app.api.post(`/v2/campaigns/${id}/duplicate`);
  assert.equal(res.status, 201, res.text);
  const copy = res.body;
  assert.notEqual(copy.id, id);
  assert.equal(copy.name, 'Dup source (copy)');
  assert.equal(copy.status, 'draft');
  assert.equal(copy.sent_at, null);
  assert.equal(copy.subject, BODY.subject);
  assert.equal(copy.preview_text, 'Peek');
  assert.equal(copy.content_type, 'mjml');
  assert.deepEqual(copy.recipients, [{ audience_id: list, exclude: false }]);
  const content = (await app.api.get(`/v2/campaigns/${copy.id}/content`)).body;
  assert.equal(content.html, BODY.html);
  assert.deepEqual(content.content, BODY.content);
  const events = await app.running.ctx.db.selectFrom('events').select('data').where('type', '=', 'campaign.created').execute();
  assert.ok(events.some((e) => JSON.parse(e.data).id === copy.id));
  assert.equal((await app.api.post('/v2/campaigns/cmp_nope/duplicate')).status, 404);
});

test("test send: [Test] subject, the contact's values or the address alone with defaults, 1 credit each, limits", async () => {
  await contact(app.api, { email: 'test-ann@example.org', first_name: 'Ann' });
  const id = (await app.api.post('/v2/campaigns', { name: 'Tested', from_email: 'news@acme.test', from_name: 'Acme', ...BODY })).body.id;
  const creditsBefore = Number(
    (await app.running.ctx.db.selectFrom('workspaces').select('credits').where('id', '=', app.workspace.id).executeTakeFirstOrThrow())
      .credits,
  );
  const res = await app.api.post(`/v2/campaigns/${id}/test`, {
    emails: ['Test-Ann@example.org', 'stranger@example.org', 'stranger@example.org'],
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.sent.length, 2);
  assert.equal(res.body.sent[0].email, 'test-ann@example.org');
  assert.ok(res.body.sent[0].contact_id);
  assert.equal(res.body.sent[1].contact_id, null);
  const ann = await app.parse((await waitFor('test-ann@example.org')).raw);
  assert.equal(ann.subject, '[Test] Hi Ann');
  assert.match(String(ann.html), /Hello Ann,/);
  assert.match(String(ann.html), /href="https:\/\/postlane\.test\/unsubscribe\//);
  const stranger = await app.parse((await waitFor('stranger@example.org')).raw);
  assert.equal(stranger.subject, '[Test] Hi friend');
  assert.match(String(stranger.html), /Hello there,/);
  assert.match(String(stranger.text), /Hello there\./);
  const creditsAfter = Number(
    (await app.running.ctx.db.selectFrom('workspaces').select('credits').where('id', '=', app.workspace.id).executeTakeFirstOrThrow())
      .credits,
  );
  assert.equal(creditsAfter, creditsBefore - 2, '1 credit per test email');
  const row = await app.running.ctx.db
    .selectFrom('emails')
    .select(['source', 'meta'])
    .where('id', '=', res.body.sent[1].email_id)
    .executeTakeFirstOrThrow();
  assert.equal(row.source, 'api');
  assert.deepEqual(JSON.parse(row.meta!), { campaign_id: id, campaign_test: 'true' });

  const six = await app.api.post(`/v2/campaigns/${id}/test`, {
    emails: ['a@example.org', 'b@example.org', 'c@example.org', 'd@example.org', 'e@example.org', 'f@example.org'],
  });
  assert.equal(six.status, 400, six.text);
  const invalid = await app.api.post(`/v2/campaigns/${id}/test`, { emails: ['not an address'] });
  assert.equal(invalid.status, 422, invalid.text);
  assert.deepEqual(invalid.body.errors, { emails: ['not an address is not an email address'] });
  const bare = (await app.api.post('/v2/campaigns', { name: 'Bare' })).body.id;
  const refused = await app.api.post(`/v2/campaigns/${bare}/test`, { emails: ['x@example.org'] });
  assert.equal(refused.status, 422, refused.text);
  assert.deepEqual(Object.keys(refused.body.errors).sort(), ['from_email', 'html', 'subject']);
  assert.equal((await app.api.post('/v2/campaigns/cmp_nope/test', { emails: ['x@example.org'] })).status, 404);
});

async function waitFor(address: string) {
  for (let i = 0; i < 300; i++) {
    const found = to(address);
    if (found.length > 0) return found[found.length - 1];
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no message to ${address}`);
}

test("the editor's MJML compiles for any workspace (no MJML alpha), merge tags left as written", async () => {
  const res = await app.api.post('/v2/campaigns/mjml/render', {
    mjml: '<mjml><mj-body><mj-section><mj-column><mj-text>Hi {{first_name|"there"}}</mj-text></mj-column></mj-section></mj-body></mjml>',
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.valid, true);
  assert.match(res.body.html, /Hi \{\{first_name\|"there"\}\}/);
  const bad = await app.api.post('/v2/campaigns/mjml/render', { mjml: '<mjml><mj-body><mj-text>loose</mj-text></mj-body></mjml>' });
  assert.equal(bad.status, 200, bad.text);
  assert.ok(bad.body.diagnostics.length > 0);
  assert.equal((await app.api.post('/v2/campaigns/mjml/render', {})).status, 400);
});

test('a real send: {{first_name|"there"}} reads "there" for a contact without a first name, the name otherwise', async () => {
  const list = await audience(app.api, 'Fallback list');
  await contact(app.api, { email: 'fb-named@example.org', first_name: 'Nia', audiences: [list] });
  await contact(app.api, { email: 'fb-blank@example.org', audiences: [list] });
  const id = await readyCampaign(app.api, [list], [], BODY);
  assert.equal((await app.api.post(`/v2/campaigns/${id}/send`, {})).status, 200);
  await waitForCampaign(app.api, id, 'sent');
  const named = await app.parse((await waitFor('fb-named@example.org')).raw);
  assert.equal(named.subject, 'Hi Nia');
  assert.match(String(named.html), /Hello Nia,/);
  const blank = await app.parse((await waitFor('fb-blank@example.org')).raw);
  assert.equal(blank.subject, 'Hi friend');
  assert.match(String(blank.html), /Hello there,/);
  assert.match(String(blank.text), /Hello there\./);
});
