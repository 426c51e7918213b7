// Deliverability guardrails (docs/deliverability.md) against a running Postlane: campaigns to the
// loopback SMTP sink, spam complaints fed back as ARF reports to the inbound listener. A
// campaign waits for credits after its first 1,000 (or 250) emails, so the outcomes of those
// arrive while it still has recipients left, as they would in a large send.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, freePort } from '../helpers/app.ts';
import type { DeliveryApp } from '../emails/delivery/helpers.ts';
import { submit } from '../smtp/helpers.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { GUARDRAILS_JOB } from '../../src/resources/campaigns/guardrails.ts';
import { seedAudience } from './seed.ts';
import { audience, readyCampaign, report, startCampaignApp, waitForCampaign } from './helpers.ts';

let app: DeliveryApp;
let inboundPort: number;
before(async () => {
  inboundPort = await freePort();
  app = await startCampaignApp({ env: { SMTP_INBOUND_PORT: String(inboundPort) }, workspace: { members: ['owner@example.org'] } });
});
after(() => app.close());

const db = () => app.running.ctx.db;
const headerOf = (raw: Buffer, name: string) => {
  const head = raw
    .toString('utf8')
    .split('\r\n\r\n')[0]
    .replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}: (.*)$`, 'mi').exec(head)?.[1] ?? null;
};
const copiesTo = (prefix: string) => app.sink.messages.filter((m) => m.rcptTo[0].startsWith(prefix));

function arf(verp: string, recipient: string, messageId: string): string {
  return [
    'From: Mail Feedback <feedback@fbl.example.org>',
    `To: <${verp}>`,
    'Subject: FW: complaint',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="b2"',
    '',
    '--b2',
    'Content-Type: text/plain',
    '',
    'This is an email abuse report.',
    '',
    '--b2',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: ExampleFBL/1.0',
    'Version: 1',
    `Original-Mail-From: <${verp}>`,
    `Original-Rcpt-To: <${recipient}>`,
    '',
    '--b2',
    'Content-Type: message/rfc822',
    '',
    'From: news@acme.test',
    `To: ${recipient}`,
    `Message-ID: ${messageId}`,
    'Subject: x',
    '',
    'x',
    '',
    '--b2--',
    '',
  ].join('\r\n');
}

/** `count` recipients of the campaign report its mail as spam, through their feedback loop. */
async function complain(prefix: string, count: number): Promise<void> {
  for (const copy of copiesTo(prefix).slice(0, count)) {
    const messageId = headerOf(copy.raw, 'Message-ID')!;
    const sent = await submit(
      { port: inboundPort, key: null, plain: true },
      { envelope: { from: '', to: [copy.mailFrom] }, raw: arf(copy.mailFrom, copy.rcptTo[0], messageId) },
    );
    assert.equal(sent.response, '250 2.0.0 OK');
  }
}

/** A campaign to `size` seeded contacts, sending as far as `affordable` emails and then waiting for credits. */
async function campaignWaitingForCredits(prefix: string, size: number, affordable: number) {
  const list = await audience(app.api, `List ${prefix}`);
  await seedAudience(db(), app.workspace.id, list, size, prefix);
  const id = await readyCampaign(app.api, [list]);
  await updateWorkspace(db(), app.workspace.id, { credits: affordable * 2 });
  assert.equal((await app.api.post(`/v2/campaigns/${id}/send`)).status, 200);
  await eventually(async () => (await app.api.get(`/v2/campaigns/${id}`)).body.status_reason === 'insufficient_credits', 30_000);
  return id;
}

const campaignEvents = async (id: string) =>
  (await db().selectFrom('events').select(['type', 'data']).where('type', 'like', 'campaign.%').orderBy('seq').execute())
    .filter((e) => JSON.parse(e.data).id === id)
    .map((e) => e.type);

test('complaints past 0.3 % of 1,000 delivered pause the campaign, emit campaign.updated, say why and notify the members', async () => {
  const id = await campaignWaitingForCredits('gc', 1100, 1000);
  await eventually(async () => (await report(app.api, id)).delivered === 1000, 60_000);

  // Bulk mail carries Gmail's Feedback-ID and the RFC 8058 one-click unsubscribe.
  const copy = copiesTo('gc-')[0];
  assert.equal(headerOf(copy.raw, 'Feedback-ID'), `${id}:${app.workspace.id}:campaign:acme.test`);
  assert.match(headerOf(copy.raw, 'List-Unsubscribe')!, /^<https:\/\/postlane\.test\/unsubscribe\/[^>]+>, <mailto:/);
  assert.equal(headerOf(copy.raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
  assert.match(headerOf(copy.raw, 'DKIM-Signature')!, /h=[^;]*Feedback-ID/i, 'the header is signed');

  await complain('gc-', 4); // 0.4 %
  const paused = await eventually(async () => {
    const res = await app.api.get(`/v2/campaigns/${id}`);
    return res.body.status_reason === 'complaint_rate' && res.body;
  }, 20_000);
  assert.equal(paused.status, 'paused');
  assert.match(paused.paused_reason, /4 of 1000 delivered messages were reported as spam \(0\.40 %\), past the 0\.30 % complaint rate/);
  const types = await campaignEvents(id);
  assert.deepEqual(types.slice(-2), ['campaign.paused', 'campaign.updated']);
  const figures = await report(app.api, id);
  assert.equal(figures.complained, 4);
  assert.equal(figures.complaint_rate, 0.004);
  assert.equal(figures.pending, 100, 'nothing more was sent');

  const notice = await eventually(
    async () => app.sink.messages.find((m) => m.rcptTo[0] === 'owner@example.org' && /paused/.test(m.raw.toString())),
    15_000,
  );
  const parsed = await app.parse(notice.raw);
  assert.match(parsed.subject ?? '', /^Campaign ".+" was paused: too many spam complaints$/);
  assert.match(parsed.text ?? '', /0\.40 %/);

  // Credits alone do not resume it; a person resuming it overrides the guardrails.
  await updateWorkspace(db(), app.workspace.id, { addCredits: 1000 });
  const resumed = await app.api.post(`/v2/campaigns/${id}/resume`);
  assert.equal(resumed.status, 200, resumed.text);
  assert.equal(resumed.body.paused_reason, null);
  await waitForCampaign(app.api, id, 'sent', 30_000);
});

test('complaints below 0.3 % of 1,000 delivered: the check runs and the campaign completes', async () => {
  const id = await campaignWaitingForCredits('gk', 1050, 1000);
  await eventually(async () => (await report(app.api, id)).delivered === 1000, 60_000);
  await complain('gk-', 2); // 0.2 %
  await eventually(async () => (await report(app.api, id)).complained === 2);
  // Each complaint queued a check; wait until it ran.
  await eventually(
    async () => (await db().selectFrom('jobs').select('id').where('type', '=', GUARDRAILS_JOB).execute()).length === 0,
    15_000,
  );
  const waiting = (await app.api.get(`/v2/campaigns/${id}`)).body;
  assert.equal(waiting.status_reason, 'insufficient_credits');
  await updateWorkspace(db(), app.workspace.id, { addCredits: 1000 });
  const sent = await waitForCampaign(app.api, id, 'sent', 30_000);
  assert.equal(sent.paused_reason, null);
  const types = await campaignEvents(id);
  assert.ok(!types.slice(types.indexOf('campaign.sending')).includes('campaign.updated'), types.join());
});

test('hard bounces past 5 % of the first outcomes pause the campaign', async () => {
  // One recipient in ten does not exist; 250 of the 300 are sent before credits run out.
  for (let n = 0; n < 300; n += 10) app.sink.addRule({ match: `hb-${n}@example.org`, reply: { code: 550, message: '5.1.1 User unknown' } });
  const id = await campaignWaitingForCredits('hb', 300, 250);
  const paused = await eventually(async () => {
    const res = await app.api.get(`/v2/campaigns/${id}`);
    return res.body.status_reason === 'hard_bounce_rate' && res.body;
  }, 30_000);
  assert.equal(paused.status, 'paused');
  assert.match(paused.paused_reason, /bounced for good \(\d+\.\d\d % hard bounces\), past the 5\.00 % limit/);
  const figures = await report(app.api, id);
  assert.ok(figures.hard_bounced > 12, JSON.stringify(figures));
  assert.ok(figures.hard_bounce_rate > 0.05);
});

test('automation mail to a contact carries Feedback-ID and a one-click List-Unsubscribe whose POST unsubscribes the contact', async () => {
  await updateWorkspace(db(), app.workspace.id, { credits: 1000 });
  const template = await app.api.post('/v2/templates', {
    name: 'Welcome',
    alias: 'welcome',
    from: 'Acme <hello@acme.test>',
    subject: 'Welcome',
    text: 'Hello',
  });
  assert.equal(template.status, 201, template.text);
  const list = await audience(app.api, 'Automated');
  const created = await app.api.post('/v2/automations', {
    context: 'contact',
    name: 'Welcome',
    steps: [
      { key: 'joined', type: 'trigger', trigger: 'contact.added_to_audience', config: { audience_id: list } },
      { key: 'mail', type: 'action', action: 'send_email', config: { type: 'template', template_id: 'welcome' } },
    ],
    connections: [{ from: 'joined', to: 'mail' }],
  });
  assert.equal(created.status, 201, created.text);
  const automationId = created.body.data.id;
  assert.equal((await app.api.post(`/v2/automations/${automationId}/start`)).status, 200);
  const contact = await app.api.post('/v2/contacts', { email: 'au-ada@example.org', audiences: [list] });
  assert.equal(contact.status, 201, contact.text);

  const copy = await eventually(async () => copiesTo('au-ada@')[0], 15_000);
  assert.equal(headerOf(copy.raw, 'Feedback-ID'), `${automationId}:${app.workspace.id}:automation:acme.test`);
  assert.equal(headerOf(copy.raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
  const url = /^<(https:\/\/postlane\.test\/unsubscribe\/[^>]+)>$/.exec(headerOf(copy.raw, 'List-Unsubscribe') ?? '')?.[1];
  assert.ok(url, headerOf(copy.raw, 'List-Unsubscribe') ?? 'no List-Unsubscribe');
  assert.equal((await app.api.get(`/v2/contacts/${contact.body.id}`)).body.unsubscribed, false);
  // What a mail client does for the one-click button (RFC 8058): one POST, nothing else.
  const posted = await fetch(`${app.url}${new URL(url).pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  assert.equal(posted.status, 200);
  assert.equal((await app.api.get(`/v2/contacts/${contact.body.id}`)).body.unsubscribed, true);
});

test('a campaign from a domain that cannot DKIM-sign its mail is refused, sent now or scheduled', async () => {
  // The domain exists, but its DNS records (DKIM among them) were never published.
  const created = await app.api.post('/v2/domains', { name: 'unsigned.test' });
  assert.equal(created.status, 201, created.text);
  const list = await audience(app.api, 'Unsigned');
  await seedAudience(db(), app.workspace.id, list, 3, 'us');
  await updateWorkspace(db(), app.workspace.id, { credits: 100 });
  const id = await readyCampaign(app.api, [list], [], { from_email: 'news@unsigned.test' });
  for (const body of [{}, { scheduled_at: new Date(Date.now() + 3600_000).toISOString() }]) {
    const refused = await app.api.post(`/v2/campaigns/${id}/send`, body);
    assert.equal(refused.status, 422, refused.text);
    assert.match(
      refused.body.message,
      /news@unsigned\.test is not on a verified domain: verify the DNS records of unsigned\.test \(DKIM, SPF, return path\), so that campaign mail is DKIM-signed by its From domain/,
    );
    assert.equal((await app.api.get(`/v2/campaigns/${id}`)).body.status, 'draft', 'nothing changed');
  }
  const elsewhere = await readyCampaign(app.api, [list], [], { from_email: 'news@nowhere.test' });
  const unknown = await app.api.post(`/v2/campaigns/${elsewhere}/send`);
  assert.equal(unknown.status, 422);
  assert.match(unknown.body.errors.from_email[0], /add nowhere\.test and verify its DNS records/);
});

test('the overview shows complaint and hard-bounce rates per workspace and sending domain against the thresholds', async () => {
  const res = await app.api.get('/v2/stats/deliverability');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.thresholds, {
    complaint_rate: { recommended: 0.001, limit: 0.003 },
    hard_bounce_rate: { recommended: 0.02, limit: 0.05 },
  });
  const day = res.body.workspace.last_24h;
  // The earlier tests: 4 + 2 complaints, and the bounces of the third campaign.
  assert.equal(day.complained, 6);
  assert.ok(day.delivered >= 2000, JSON.stringify(day));
  assert.equal(day.complaint_rate, day.complained / day.delivered);
  assert.equal(day.complaint_level, 'warning');
  assert.ok(day.hard_bounced >= 13);
  assert.equal(day.hard_bounce_level, 'ok');
  assert.deepEqual(res.body.workspace.last_7d, day);
  assert.deepEqual(
    res.body.domains.map((d: any) => d.name),
    ['acme.test'],
  );
  assert.deepEqual(res.body.domains[0].last_24h, day);
});
