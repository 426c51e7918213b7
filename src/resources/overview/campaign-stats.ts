// A campaign's opens and clicks over time and its clicks per link (GET /v2/stats/campaigns/{id}),
// from the tracking hits of the campaign's emails: every hit counted (as the campaign report's
// `loaded` and `clicked` are), and unique counts by email. Hourly while the hits span three days
// or less, daily after, unless the caller picks.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { isoFromMs } from '../../platform/clock.ts';
import { COMPLAINT_RATE, HARD_BOUNCE_RATE } from '../../mail/bulk-sender-rules.ts';
import { getCampaign } from '../campaigns/service.ts';

const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;
/** Buckets drawn at most, so a long-lived campaign still answers in one small page. */
const MAX_BUCKETS = 400;

export async function campaignStats(db: Db, workspaceId: string, idOrName: string, wanted?: 'hour' | 'day') {
  const campaign = await getCampaign(db, workspaceId, idOrName);
  const hits = () =>
    db
      .selectFrom('campaign_recipients as r')
      .innerJoin('tracking_hits as h', 'h.email_id', 'r.email_id')
      .where('r.campaign_id', '=', campaign.id);
  const span = await hits()
    .select([sql<string | null>`min(h.created_at)`.as('first'), sql<string | null>`max(h.created_at)`.as('last')])
    .executeTakeFirst();
  const interval = wanted ?? (span?.first && span.last && Date.parse(span.last) - Date.parse(span.first) > 3 * DAY_MS ? 'day' : 'hour');
  const step = interval === 'hour' ? HOUR_MS : DAY_MS;
  const width = interval === 'hour' ? 13 : 10;
  const bucket = sql<string>`substr(h.created_at, 1, ${sql.lit(width)})`;
  const rows = await hits()
    .select([bucket.as('bucket'), 'h.kind', sql<number>`count(*)`.as('n'), sql<number>`count(distinct h.email_id)`.as('unique_n')])
    .groupBy([sql`1`, sql`2`])
    .execute();
  const links = await hits()
    .innerJoin('tracking_links as l', 'l.id', 'h.link_id')
    .select(['l.url', sql<number>`count(*)`.as('clicks'), sql<number>`count(distinct h.email_id)`.as('unique_clicks')])
    .where('h.kind', '=', 'click')
    .groupBy('l.url')
    .orderBy(sql`2`, 'desc')
    .orderBy('l.url')
    .execute();

  const data: Array<{ start: string; opened: number; clicked: number; unique_opened: number; unique_clicked: number }> = [];
  if (span?.first && span.last) {
    const floor = (iso: string) => Date.parse(`${iso.slice(0, width)}${interval === 'hour' ? ':00:00Z' : 'T00:00:00Z'}`);
    const last = floor(span.last);
    const first = Math.max(floor(span.first), last - (MAX_BUCKETS - 1) * step);
    const byKey = new Map<string, (typeof data)[number]>();
    for (let t = first; t <= last; t += step) {
      const entry = { start: isoFromMs(t), opened: 0, clicked: 0, unique_opened: 0, unique_clicked: 0 };
      data.push(entry);
      byKey.set(entry.start.slice(0, width), entry);
    }
    for (const row of rows) {
      const entry = byKey.get(row.bucket);
      if (!entry) continue;
      if (row.kind === 'click') {
        entry.clicked += Number(row.n);
        entry.unique_clicked += Number(row.unique_n);
      } else {
        entry.opened += Number(row.n);
        entry.unique_opened += Number(row.unique_n);
      }
    }
  }
  return {
    object: 'campaign_stats' as const,
    campaign_id: campaign.id,
    interval,
    thresholds: { complaint_rate: COMPLAINT_RATE, hard_bounce_rate: HARD_BOUNCE_RATE },
    data,
    links: links.map((l) => ({ url: l.url ?? '', clicks: Number(l.clicks), unique_clicks: Number(l.unique_clicks) })),
  };
}
