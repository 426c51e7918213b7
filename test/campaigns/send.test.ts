// Sending campaigns to a real SMTP sink: who receives it (shared contacts once, unsubscribed and
// suppressed skipped), merge tags, RFC 8058 headers and the one-click unsubscribe, the send
// rules, scheduling, cancel and pause mid-send, credits running out and coming back, report.
process.env.POSTLANE_CAMPAIGN_BATCH = '5';
process.env.POSTLANE_CAMPAIGN_CREDIT_WAIT_MS = '200';
process.env.POSTLANE_CAMPAIGN_BATCH_DELAY_MS = '100';
process.env.POSTLANE_CAMPAIGN_MAX_QUEUED = '15'; // the fan-out waits for deliveries to drain (40-recipient campaigns below)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/app.ts';
import { checkEventPayload } from '../../src/resources/events/payloads.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import type { DeliveryApp } from '../emails/delivery/helpers.ts';
import { audience, contact, CONTENT, PUBLIC_URL, readyCampaign, report, startCampaignApp, waitForCampaign } from './helpers.ts';

let app: DeliveryApp;
before(async () => {
  app = await startCampaignApp();
});
after(() => app.close());

const credits = async () =>
  Number(
    (await app.running.ctx.db.selectFrom('workspaces').select('credits').where('id', '=', app.workspace.id).executeTakeFirstOrThrow())
      .credits,
  );
const campaignEvents = async (id: string) =>
  (await app.running.ctx.db.selectFrom('events').select(['type', 'data']).where('type', 'like', 'campaign.%').orderBy('seq').execute())
    .map((row) => ({ type: row.type, object: JSON.parse(row.data) }))
    .filter((e) => e.object.id === id);
const delivered = (prefix: string) => app.sink.messages.filter((m) => m.rcptTo.some((r) => r.startsWith(prefix)));

test('two audiences sharing contacts: each eligible address once, merge tags filled, RFC 8058 headers, DKIM, one-click unsubscribe, report', async () => {
  const api = app.api;
  const a = await audience(api, 'Shared A');
  const b = await audience(api, 'Shared B');
  const c = await audience(api, 'Excluded C');
  const ann = await contact(api, {
    email: 's1-ann@example.org',
    first_name: 'Ann',
    last_name: 'Lee',
    custom_fields: { plan: 'gold' },
    audiences: [a, b, c],
  });
  await contact(api, { email: 's1-bob@example.org', first_name: 'Bob', audiences: [a] });
  await contact(api, { email: 's1-cat@example.org', audiences: [b] });
  await contact(api, { email: 's1-dan@example.org', first_name: 'Dan', audiences: [a], unsubscribed: true });
  await contact(api, { email: 's1-eve@example.org', first_name: 'Eve', audiences: [b] });
  assert.equal((await api.post('/v2/suppressions', { email: 's1-eve@example.org', type: 'bounce' })).status, 201);
  const id = await readyCampaign(api, [a, b], [c]);
  const before = await credits();

  const sent = await api.post(`/v2/campaigns/${id}/send`, {});
  assert.equal(sent.status, 200, sent.text);
  assert.equal(sent.body.status, 'queued');
  const done = await waitForCampaign(api, id, 'sent');
  assert.ok(done.sent_at);
  await app.sink.waitForMessages(3, 15_000);
  await new Promise((r) => setTimeout(r, 300)); // nothing more arrives
  const messages = delivered('s1-');
  assert.deepEqual(
    messages.map((m) => m.rcptTo[0]).sort(),
    ['s1-ann@example.org', 's1-bob@example.org', 's1-cat@example.org'],
    'shared contact once; unsubscribed and suppressed skipped; exclusions not applied',
  );
  assert.equal(await credits(), before - 6, '2 credits per email');

  const annMessage = messages.find((m) => m.rcptTo[0] === 's1-ann@example.org')!;
  const parsed = await app.parse(annMessage.raw);
  assert.equal(parsed.subject, 'Hi Ann');
  assert.equal(parsed.to && 'text' in parsed.to ? parsed.to.text : '', 's1-ann@example.org');
  assert.match(String(parsed.from?.text), /Acme News/);
  assert.match(String(parsed.html), /Hello Ann Lee \(s1-ann@example\.org\), plan gold/);
  const unsubscribeUrl = /href="([^"]+)"/.exec(String(parsed.html))![1].replace(/&amp;/g, '&');
  assert.ok(unsubscribeUrl.startsWith(`${PUBLIC_URL}/unsubscribe/`), unsubscribeUrl);
  assert.ok(String(parsed.text).includes(unsubscribeUrl));
  const raw = annMessage.raw
    .toString('utf8')
    .split('\r\n\r\n')[0]
    .replace(/\r\n[ \t]+/g, ' '); // headers, unfolded
  assert.match(raw, new RegExp(`^List-Unsubscribe: <${unsubscribeUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}>`, 'm'));
  assert.match(raw, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m);
  assert.match(raw, /^Reply-To: news@acme\.test/m, 'reply_to defaults to from_email');
  const dkim = await app.verifyDkim(annMessage.raw);
  assert.equal(dkim.results[0].status.result, 'pass');
  assert.match(dkim.results[0].signingHeaders.keys, /List-Unsubscribe-Post/i);
  const bob = await app.parse(delivered('s1-bob')[0].raw);
  assert.match(String(bob.html), /Hello Bob  \(s1-bob@example\.org\), plan </, 'missing values render empty');

  // The emails are ordinary emails: listed, with their events, meta naming the campaign.
  const rows = await app.running.ctx.db
    .selectFrom('emails')
    .selectAll()
    .where('source', '=', 'campaign')
    .where('to', 'like', 's1-%')
    .execute();
  assert.equal(rows.length, 3);
  const listed = await api.get(`/v2/emails/${rows[0].id}`);
  assert.equal(listed.status, 200, listed.text);
  await eventually(async () => (await app.eventsOf(rows[0].id)).some((e) => e.type === 'email.delivered'));
  assert.deepEqual((await app.eventsOf(rows[0].id)).map((e) => e.type).slice(0, 1), ['email.accepted']);

  // The hosted page: GET asks, the one-click POST unsubscribes (no session, no token but the link).
  const path = new URL(unsubscribeUrl).pathname;
  const page = await fetch(`${app.url}${path}`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<form method="post"/);
  assert.equal((await api.get(`/v2/contacts/${ann}`)).body.unsubscribed, false, 'GET changes nothing');
  const oneClick = await fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  assert.equal(oneClick.status, 200);
  const annAfter = (await api.get(`/v2/contacts/${ann}`)).body;
  assert.equal(annAfter.unsubscribed, true);
  assert.equal((await fetch(`${app.url}${path}`, { method: 'POST' })).status, 200, 'idempotent');
  assert.equal((await fetch(`${app.url}${path.slice(0, -3)}xyz`, { method: 'POST' })).status, 404, 'a forged link is refused');
  const contactEvents = await app.running.ctx.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('type', 'in', ['contact.updated', 'subscriber.updated'])
    .orderBy('seq')
    .execute();
  const forAnn = contactEvents.filter((e) => e.data.includes(ann));
  assert.ok(forAnn.some((e) => e.type === 'contact.updated'));
  assert.ok(forAnn.some((e) => e.type === 'subscriber.updated'));

  await eventually(async () => (await report(api, id)).delivered === 3);
  const figures = await report(api, id);
  assert.deepEqual(
    {
      recipients: figures.recipients,
      sent: figures.sent,
      delivered: figures.delivered,
      bounced: figures.bounced,
      unsubscribed: figures.unsubscribed,
      pending: figures.pending,
    },
    { recipients: 3, sent: 3, delivered: 3, bounced: 0, unsubscribed: 1, pending: 0 },
  );

  const types = (await campaignEvents(id)).map((e) => e.type);
  assert.deepEqual(types, ['campaign.created', 'campaign.updated', 'campaign.queued', 'campaign.sending', 'campaign.sent']);
  for (const e of await campaignEvents(id)) assert.deepEqual(checkEventPayload(e.type, e.object), [], e.type);
});

test('send rules: each missing prerequisite named (422), 402 without credits for the first batch, 409 once sent', async () => {
  const { api, workspace } = await app.newWorkspace();
  const a = await audience(api, 'Rules');
  const empty = await audience(api, 'Empty');
  await contact(api, { email: 'rules-1@example.org', audiences: [a] });

  const bare = (await api.post('/v2/campaigns', { name: 'bare' })).body.id;
  const res = await api.post(`/v2/campaigns/${bare}/send`);
  assert.equal(res.status, 422, res.text);
  assert.deepEqual(Object.keys(res.body.errors).sort(), ['from_email', 'html', 'recipients', 'subject']);
  assert.match(res.body.message, /from_email/);

  const noUnsubscribe = await api.post('/v2/campaigns', { name: 'nu', from_email: 'news@acme.test', subject: 'x', html: '<p>no link</p>' });
  await api.post(`/v2/campaigns/${noUnsubscribe.body.id}`, { recipients: [{ audience_id: a }] });
  const refused = await api.post(`/v2/campaigns/${noUnsubscribe.body.id}/send`);
  assert.equal(refused.status, 422);
  assert.match(refused.body.errors.html[0], /unsubscribe_url/);

  const unverified = await readyCampaign(api, [a], [], { from_email: 'news@unknown.test' });
  const domainRes = await api.post(`/v2/campaigns/${unverified}/send`);
  assert.equal(domainRes.status, 422);
  assert.match(domainRes.body.errors.from_email[0], /verified domain/);

  // acme.test belongs to the first workspace: verify one here too.
  await app.verifiedDomain('rules.test', api);
  const nobody = await readyCampaign(api, [empty], [], { from_email: 'news@rules.test' });
  const nobodyRes = await api.post(`/v2/campaigns/${nobody}/send`);
  assert.equal(nobodyRes.status, 422);
  assert.match(nobodyRes.body.errors.recipients[0], /no subscribed contacts/);

  const ok = await readyCampaign(api, [a], [], { from_email: 'news@rules.test' });
  await updateWorkspace(app.running.ctx.db, workspace.id, { credits: 1 });
  const poor = await api.post(`/v2/campaigns/${ok}/send`);
  assert.equal(poor.status, 402);
  assert.match(poor.body.message, /2 credits/);
  await updateWorkspace(app.running.ctx.db, workspace.id, { credits: 100 });
  assert.equal((await api.post(`/v2/campaigns/${ok}/send`)).status, 200);
  const again = await api.post(`/v2/campaigns/${ok}/send`);
  assert.equal(again.status, 409);
  await waitForCampaign(api, ok, 'sent');
});

test('a campaign scheduled for later sends what is saved at its time', async () => {
  const api = app.api;
  const a = await audience(api, 'Later');
  await contact(api, { email: 'later-1@example.org', first_name: 'Lou', audiences: [a] });
  const id = await readyCampaign(api, [a]);
  const at = new Date(Date.now() + 1500).toISOString();
  const res = await api.post(`/v2/campaigns/${id}/send`, { scheduled_at: at });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'scheduled');
  assert.ok(res.body.scheduled_at);
  assert.equal((await api.post(`/v2/campaigns/${id}`, { subject: 'Changed for {{first_name}}' })).status, 200, 'still editable');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(delivered('later-').length, 0, 'nothing before its time');
  await waitForCampaign(api, id, 'sent');
  await eventually(async () => delivered('later-').length === 1);
  assert.equal((await app.parse(delivered('later-')[0].raw)).subject, 'Changed for Lou');
  const types = (await campaignEvents(id)).map((e) => e.type);
  assert.ok(types.includes('campaign.scheduled') && types.includes('campaign.sent'));
});

test('cancel mid-send drops the pending recipients; pause stops within a batch and resume finishes', async () => {
  const api = app.api;
  const a = await audience(api, 'Big');
  for (let i = 0; i < 40; i++) await contact(api, { email: `big-${String(i).padStart(2, '0')}@example.org`, audiences: [a] });
  const db = app.running.ctx.db;

  const paused = await readyCampaign(api, [a]);
  assert.equal((await api.post(`/v2/campaigns/${paused}/send`)).status, 200);
  await eventually(async () => (await report(api, paused)).sent > 0, 10_000, 5);
  const p = await api.post(`/v2/campaigns/${paused}/pause`);
  assert.equal(p.status, 200, p.text);
  assert.equal(p.body.status, 'paused');
  assert.equal(p.body.status_reason, 'paused');
  const atPause = (await report(api, paused)).sent;
  await new Promise((r) => setTimeout(r, 500));
  const afterWait = await report(api, paused);
  assert.ok(afterWait.sent <= atPause + 5, `at most one batch after pausing (${atPause} → ${afterWait.sent})`);
  assert.ok(afterWait.pending > 0, 'paused before the end');
  assert.equal((await api.post(`/v2/campaigns/${paused}/resume`)).status, 200);
  await waitForCampaign(api, paused, 'sent');
  const final = await report(api, paused);
  assert.equal(final.sent, 40);
  assert.equal(final.pending, 0);

  const canceled = await readyCampaign(api, [a]);
  assert.equal((await api.post(`/v2/campaigns/${canceled}/send`)).status, 200);
  await eventually(async () => (await report(api, canceled)).sent > 0, 10_000, 5);
  const c = await api.post(`/v2/campaigns/${canceled}/cancel`);
  assert.equal(c.status, 200, c.text);
  assert.equal(c.body.status, 'canceled');
  await new Promise((r) => setTimeout(r, 500));
  const figures = await report(api, canceled);
  assert.equal(figures.pending, 0);
  assert.ok(figures.canceled > 0, 'recipients not yet enqueued were dropped');
  assert.equal(figures.sent + figures.canceled, 40);
  const emails = await db
    .selectFrom('emails')
    .select('id')
    .where('meta', '=', JSON.stringify({ campaign_id: canceled }))
    .execute();
  assert.equal(emails.length, figures.sent, 'an email exactly for each enqueued recipient');
  assert.equal((await api.get(`/v2/campaigns/${canceled}`)).body.status, 'canceled');
});

test('credits running out mid-send: the campaign waits as paused/insufficient_credits and resumes when credits are added', async () => {
  const { api, workspace } = await app.newWorkspace({ credits: 1000 });
  await app.verifiedDomain('credits.test', api);
  const a = await audience(api, 'Credits');
  for (let i = 0; i < 12; i++) await contact(api, { email: `cr-${String(i).padStart(2, '0')}@example.org`, audiences: [a] });
  const id = await readyCampaign(api, [a], [], { from_email: 'news@credits.test' });
  await updateWorkspace(app.running.ctx.db, workspace.id, { credits: 14 }); // 7 emails
  assert.equal((await api.post(`/v2/campaigns/${id}/send`)).status, 200);
  const waiting = await eventually(async () => {
    const res = await api.get(`/v2/campaigns/${id}`);
    return res.body.status === 'paused' && res.body;
  });
  assert.equal(waiting.status_reason, 'insufficient_credits');
  assert.equal((await report(api, id)).sent, 7);
  assert.equal(
    Number(
      (await app.running.ctx.db.selectFrom('workspaces').select('credits').where('id', '=', workspace.id).executeTakeFirstOrThrow())
        .credits,
    ),
    0,
  );
  await updateWorkspace(app.running.ctx.db, workspace.id, { addCredits: 100 });
  await waitForCampaign(api, id, 'sent');
  assert.equal((await report(api, id)).sent, 12);
  const types = (await campaignEvents(id)).map((e) => e.type);
  assert.ok(types.includes('campaign.paused') && types.includes('campaign.resumed'), types.join());
  await eventually(async () => delivered('cr-').length === 12, 15_000);
  assert.equal(new Set(delivered('cr-').map((m) => m.rcptTo[0])).size, 12);
});
void CONTENT;
