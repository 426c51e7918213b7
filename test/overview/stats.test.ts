// The overview's stats over real mail (SQLite, or PostgreSQL with TEST_DATABASE_URL): one counting
// rule for the chart, its totals, the rates, the provider and sending-domain breakdowns and the
// "sent today" of /v2/workspace (campaign mail included); a campaign's opens and clicks over time
// and its clicks per link.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { OFFER_URL, seedMail, type Seeded } from './seed.ts';

let app: DeliveryApp;
let seeded: Seeded;
before(async () => {
  app = await startDeliveryApp({
    env: { PUBLIC_URL: 'https://postlane.test' },
    sink: { rules: [{ match: 'bounce', reply: { code: 550, message: '5.1.1 <bounce>: Recipient address rejected: User unknown' } }] },
  });
  seeded = await seedMail(app);
});
after(() => app.close());

test('volume and rates of the period count API and campaign mail by one rule, per bucket, provider and sending domain', async () => {
  for (const period of ['24h', '7d', '30d', '90d']) {
    const res = await app.api.get(`/v2/stats/emails?period=${period}`);
    assert.equal(res.status, 200, res.text);
    const stats = res.body;
    assert.equal(stats.period, period);
    assert.equal(stats.interval, period === '24h' ? 'hour' : 'day');
    assert.equal(stats.data.length, period === '24h' ? 24 : Number.parseInt(period, 10));
    assert.equal(stats.to, new Date().toISOString().slice(0, 10));
    assert.deepEqual(
      {
        sent: stats.totals.sent,
        delivered: stats.totals.delivered,
        bounced: stats.totals.bounced,
        hard_bounced: stats.totals.hard_bounced,
        complained: stats.totals.complained,
        opened: stats.totals.opened,
        clicked: stats.totals.clicked,
      },
      { sent: 5, delivered: 4, bounced: 1, hard_bounced: 1, complained: 0, opened: 2, clicked: 1 },
      period,
    );
    assert.equal(stats.totals.delivery_rate, 0.8);
    assert.equal(stats.totals.bounce_rate, 0.2);
    assert.equal(stats.totals.hard_bounce_rate, 0.2);
    assert.equal(stats.totals.hard_bounce_level, 'over_limit');
    assert.equal(stats.totals.complaint_rate, 0);
    assert.equal(stats.totals.complaint_level, 'ok');
    assert.equal(stats.totals.open_rate, 0.5);
    assert.equal(stats.totals.click_rate, 0.25);
    assert.deepEqual(stats.thresholds.complaint_rate, { recommended: 0.001, limit: 0.003 });
    // Every bucket is a start; the last one holds today's mail.
    const last = stats.data.at(-1);
    assert.equal(last.sent, 5);
    assert.ok(Date.parse(last.start) <= Date.now() && Date.parse(stats.end) > Date.now());
    assert.equal(
      stats.data.slice(0, -1).reduce((sum: number, b: { sent: number }) => sum + b.sent, 0),
      0,
    );
    assert.equal(stats.data[0].delivery_rate, null, 'no rate without mail');

    const providers = Object.fromEntries(
      stats.providers.map((p: { provider: string; name: string; sent: number; delivered: number }) => [p.name, [p.sent, p.delivered]]),
    );
    assert.deepEqual(providers, { Gmail: [1, 1], Outlook: [0, 0], Yahoo: [0, 0], iCloud: [0, 0], Others: [4, 3] });
    assert.deepEqual(
      stats.sending_domains.map((d: { name: string; sent: number; bounced: number }) => [d.name, d.sent, d.bounced]),
      [['acme.test', 5, 1]],
    );
  }
  // The former query (?days=) still answers, by the same rule.
  const days = await app.api.get('/v2/stats/emails?days=3');
  assert.equal(days.body.data.length, 3);
  assert.equal(days.body.totals.sent, 5);
  assert.equal((await app.api.get('/v2/stats/emails?days=91')).status, 400);
  assert.equal((await app.api.get('/v2/stats/emails?period=1y')).status, 400);
});

test('"sent today" of the workspace is the chart\'s today: campaign mail counted, the daily limit\'s use apart', async () => {
  const workspace = (await app.api.get('/v2/workspace')).body;
  const today = (await app.api.get('/v2/stats/emails?period=7d')).body.data.at(-1);
  assert.equal(workspace.sent_today, 5);
  assert.equal(workspace.sent_today, today.sent);
  assert.equal(workspace.daily_limit_used, 4, 'the four API sends (the suppressed one too), not the campaign');
});

test("a campaign's opens and clicks over time, and its clicks per link", async () => {
  const res = await app.api.get(`/v2/stats/campaigns/${seeded.campaign}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.campaign_id, seeded.campaign);
  assert.equal(res.body.interval, 'hour');
  assert.deepEqual(res.body.links, [{ url: OFFER_URL, clicks: 1, unique_clicks: 1 }]);
  const sum = (key: string) => res.body.data.reduce((n: number, b: Record<string, number>) => n + b[key], 0);
  assert.equal(sum('clicked'), 1);
  assert.equal(sum('unique_clicked'), 1);
  assert.equal(sum('opened'), 1);
  assert.ok(res.body.data.length >= 1 && res.body.data.length <= 2);
  assert.equal((await app.api.get(`/v2/stats/campaigns/${seeded.campaign}?interval=day`)).body.interval, 'day');
  // By name too, as the campaign routes take it; an unknown campaign is a 404.
  assert.equal((await app.api.get(`/v2/stats/campaigns/${encodeURIComponent('Spring offer')}`)).body.campaign_id, seeded.campaign);
  const missing = await app.api.get('/v2/stats/campaigns/cmp_000000000000000000000000000');
  assert.equal(missing.status, 404);
});
