// What a workspace's overview shows: its mail activity counted per day from the event log, and
// its plan, credits and sending limits with today's use.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { isoFromMs, nowMs } from '../../platform/clock.ts';
import { utcDay } from '../../platform/limits.ts';
import type {} from '../../platform/db/limits-tables.ts';
import { getWorkspace, PLAN_NAMES } from '../workspaces/service.ts';

const DAY_MS = 24 * 3600 * 1000;

/** Series of the overview, by the event each counts. */
export const SERIES = {
  sent: 'email.accepted',
  delivered: 'email.delivered',
  bounced: 'email.bounced',
  complained: 'email.complained',
  opened: 'email.loaded',
  clicked: 'email.clicked',
} as const;
export type SeriesName = keyof typeof SERIES;

export async function emailStats(db: Db, workspaceId: string, days: number) {
  const today = Date.parse(`${utcDay(nowMs())}T00:00:00Z`);
  const first = today - (days - 1) * DAY_MS;
  const day = sql<string>`substr(created_at, 1, 10)`;
  const rows = await db
    .selectFrom('events')
    .select([day.as('day'), 'type', (eb) => eb.fn.countAll<number>().as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>=', isoFromMs(first))
    .where('type', 'in', Object.values(SERIES))
    .groupBy([day, 'type'])
    .execute();
  const nameOf = new Map(Object.entries(SERIES).map(([name, type]) => [type as string, name as SeriesName]));
  const buckets = new Map<string, Record<SeriesName, number>>();
  for (let t = first; t <= today; t += DAY_MS) {
    buckets.set(utcDay(t), { sent: 0, delivered: 0, bounced: 0, complained: 0, opened: 0, clicked: 0 });
  }
  const totals: Record<SeriesName, number> = { sent: 0, delivered: 0, bounced: 0, complained: 0, opened: 0, clicked: 0 };
  for (const row of rows) {
    const name = nameOf.get(row.type)!;
    const bucket = buckets.get(row.day);
    if (!bucket) continue;
    bucket[name] += Number(row.n);
    totals[name] += Number(row.n);
  }
  return {
    object: 'email_stats' as const,
    interval: 'day' as const,
    from: utcDay(first),
    to: utcDay(today),
    totals,
    data: [...buckets].map(([date, counts]) => ({ date, ...counts })),
  };
}

export async function workspaceSummary(db: Db, workspaceId: string) {
  const workspace = (await getWorkspace(db, workspaceId))!;
  const today = await db
    .selectFrom('send_daily_counts')
    .select('units')
    .where('workspace_id', '=', workspaceId)
    .where('day', '=', utcDay(nowMs()))
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
    sent_today: Number(today?.units ?? 0),
  };
}
