// What a workspace's overview shows: its mail over a period (volume, rates, by recipient provider
// and sending domain), and its plan, credits and sending limits with today's use.
//
// One counting rule for every figure here (docs/dashboard.md, "How mail is counted"): an email is
// one outbound copy for one recipient, whatever made it (the API, the SMTP relay, a campaign, an
// automation, a retry), counted in the hour or day it was created, unless it never left
// (suppressed, rejected, canceled, held, or still scheduled). Delivered, bounced, complained,
// opened and clicked count what has become of those same emails since, so every rate is a share
// of one set of emails (as Gmail's Postmaster Tools count). One grouped read through the
// (workspace_id, created_at) index.
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/schema.ts';
import { isoFromMs, nowMs } from '../../platform/clock.ts';
import { utcDay } from '../../platform/limits.ts';
import type {} from '../../platform/db/limits-tables.ts';
import { COMPLAINT_RATE, HARD_BOUNCE_RATE, rateLevel } from '../../mail/bulk-sender-rules.ts';
import { getWorkspace, PLAN_NAMES } from '../workspaces/service.ts';
import { OTHERS, PROVIDERS, providerName, providerOfRecipient } from './providers.ts';

const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** Statuses of emails that never left, so are not counted as sent. */
export const NOT_SENT = ['suppressed', 'rejected', 'canceled', 'held', 'scheduled'] as const;
const DELIVERED = ['delivered', 'loaded', 'clicked', 'complained'];
const OPENED = ['loaded', 'clicked'];

/** The last 24 hours (`24h`, hourly) or the last N UTC days, today included (`7d`, daily). */
export type Period = '24h' | `${number}d`;

export interface Counts {
  sent: number;
  delivered: number;
  bounced: number;
  hard_bounced: number;
  complained: number;
  opened: number;
  clicked: number;
}
const zero = (): Counts => ({ sent: 0, delivered: 0, bounced: 0, hard_bounced: 0, complained: 0, opened: 0, clicked: 0 });

/** The emails the rule counts as sent: outbound, not among NOT_SENT. */
export function countedAsSent<O>(query: SelectQueryBuilder<Database, 'emails', O>, workspaceId: string, fromIso: string) {
  return query
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>=', fromIso)
    .where('type', '=', 'outbound')
    .where('status', 'not in', [...NOT_SENT]);
}

function add(into: Counts, status: string, bounceType: string | null, n: number): void {
  into.sent += n;
  if (DELIVERED.includes(status)) into.delivered += n;
  if (OPENED.includes(status)) into.opened += n;
  if (status === 'clicked') into.clicked += n;
  if (status === 'complained') into.complained += n;
  if (status === 'bounced') {
    into.bounced += n;
    if (bounceType === 'hard') into.hard_bounced += n;
  }
}

const share = (part: number, whole: number) => (whole > 0 ? part / whole : null);

/** The rates of a set of counts (null while their denominator is 0). */
export function ratesOf(c: Counts) {
  const complaintRate = share(c.complained, c.delivered);
  const hardBounceRate = share(c.hard_bounced, c.delivered + c.bounced);
  return {
    delivery_rate: share(c.delivered, c.sent),
    bounce_rate: share(c.bounced, c.sent),
    hard_bounce_rate: hardBounceRate,
    hard_bounce_level: rateLevel(hardBounceRate, HARD_BOUNCE_RATE),
    complaint_rate: complaintRate,
    complaint_level: rateLevel(complaintRate, COMPLAINT_RATE),
    open_rate: share(c.opened, c.delivered),
    click_rate: share(c.clicked, c.delivered),
  };
}

const withRates = (c: Counts) => ({ ...c, ...ratesOf(c) });

/** Where a period starts and how it is cut: hours for the last 24 hours, UTC days otherwise. */
export function periodBounds(period: Period, now = nowMs()) {
  if (period === '24h') {
    const thisHour = Math.floor(now / HOUR_MS) * HOUR_MS;
    return { interval: 'hour' as const, first: thisHour - 23 * HOUR_MS, last: thisHour, step: HOUR_MS };
  }
  const today = Date.parse(`${utcDay(now)}T00:00:00Z`);
  return { interval: 'day' as const, first: today - (Number.parseInt(period, 10) - 1) * DAY_MS, last: today, step: DAY_MS };
}

export async function emailStats(db: Db, workspaceId: string, period: Period) {
  const { interval, first, last, step } = periodBounds(period);
  // ISO texts: the first 13 characters are the UTC hour, the first 10 the UTC day.
  const bucket = sql<string>`substr(${sql.ref('created_at')}, 1, ${sql.lit(interval === 'hour' ? 13 : 10)})`;
  const rows = await countedAsSent(db.selectFrom('emails'), workspaceId, isoFromMs(first))
    .select([
      bucket.as('bucket'),
      providerOfRecipient(db).as('provider'),
      'sending_domain_id',
      'status',
      'bounce_type',
      sql<number>`count(*)`.as('n'),
    ])
    // By position: PostgreSQL would take the CASE of the GROUP BY, with its own literals, as another expression.
    .groupBy([sql`1`, sql`2`, sql`3`, sql`4`, sql`5`])
    .execute();

  const keyOf = (t: number) => isoFromMs(t).slice(0, interval === 'hour' ? 13 : 10);
  const buckets = new Map<string, { start: number; counts: Counts }>();
  for (let t = first; t <= last; t += step) buckets.set(keyOf(t), { start: t, counts: zero() });
  const totals = zero();
  const providers = new Map<string, Counts>([...PROVIDERS, OTHERS].map((p) => [p.provider, zero()]));
  const domains = new Map<string, Counts>();
  for (const row of rows) {
    const n = Number(row.n);
    const inBucket = buckets.get(row.bucket);
    if (!inBucket) continue; // created after the last bucket began: a clock step, not worth a figure
    add(inBucket.counts, row.status, row.bounce_type, n);
    add(totals, row.status, row.bounce_type, n);
    add(providers.get(row.provider) ?? providers.get(OTHERS.provider)!, row.status, row.bounce_type, n);
    if (row.sending_domain_id) {
      if (!domains.has(row.sending_domain_id)) domains.set(row.sending_domain_id, zero());
      add(domains.get(row.sending_domain_id)!, row.status, row.bounce_type, n);
    }
  }
  const ids = [...domains.keys()];
  const names = ids.length
    ? await db.selectFrom('domains').select(['id', 'name']).where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute()
    : [];
  const nameOf = new Map(names.map((d) => [d.id, d.name]));
  return {
    object: 'email_stats' as const,
    period,
    interval,
    from: isoFromMs(first).slice(0, 10),
    to: isoFromMs(last).slice(0, 10),
    start: isoFromMs(first),
    end: isoFromMs(last + step),
    thresholds: { complaint_rate: COMPLAINT_RATE, hard_bounce_rate: HARD_BOUNCE_RATE },
    totals: withRates(totals),
    data: [...buckets.values()].map(({ start, counts }) => ({
      date: isoFromMs(start).slice(0, 10),
      start: isoFromMs(start),
      ...withRates(counts),
    })),
    providers: [...providers].map(([provider, counts]) => ({ provider, name: providerName(provider), ...withRates(counts) })),
    sending_domains: ids
      .map((id) => ({ domain_id: id, name: nameOf.get(id) ?? '', ...withRates(domains.get(id)!) }))
      .sort((a, b) => b.sent - a.sent || a.name.localeCompare(b.name)),
  };
}

/** Emails the rule counts as sent since `fromIso`. */
export async function countSent(db: Db, workspaceId: string, fromIso: string): Promise<number> {
  const row = await countedAsSent(db.selectFrom('emails'), workspaceId, fromIso).select(sql<number>`count(*)`.as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function workspaceSummary(db: Db, workspaceId: string) {
  const workspace = (await getWorkspace(db, workspaceId))!;
  const day = utcDay(nowMs());
  const limitUse = await db
    .selectFrom('send_daily_counts')
    .select('units')
    .where('workspace_id', '=', workspaceId)
    .where('day', '=', day)
    .executeTakeFirst();
  return {
    object: 'workspace' as const,
    id: workspace.id,
    name: workspace.name,
    plan: workspace.plan,
    plan_name: PLAN_NAMES[workspace.plan],
    credits: workspace.credits,
    verified: workspace.verified,
    features: workspace.features,
    send_rate: workspace.sendRate,
    daily_limit: workspace.dailyLimit,
    sent_today: await countSent(db, workspaceId, `${day}T00:00:00.000Z`),
    daily_limit_used: Number(limitUse?.units ?? 0),
  };
}
