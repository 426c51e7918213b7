// A workspace's complaint and hard-bounce rates over the last 24 hours and 7 days, for the
// workspace and each sending domain, against what receivers tolerate (src/mail/bulk-sender-rules.ts;
// docs/deliverability.md). Counted from the emails created in the window, whatever became of them
// since (a complaint a day later still counts against the day the mail went out, as Gmail's
// Postmaster Tools count it): one grouped read of the workspace's 7 days through the
// (workspace_id, created_at) index.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { isoFromMs, nowMs } from '../../platform/clock.ts';
import { COMPLAINT_RATE, HARD_BOUNCE_RATE, rateLevel } from '../../mail/bulk-sender-rules.ts';

const HOUR_MS = 3600 * 1000;
const DELIVERED = ['delivered', 'loaded', 'clicked', 'complained'];

interface Counts {
  delivered: number;
  complained: number;
  bounced: number;
  hard_bounced: number;
}

const zero = (): Counts => ({ delivered: 0, complained: 0, bounced: 0, hard_bounced: 0 });

/** Counts with their rates (null before anything was delivered or bounced) and where each stands. */
function windowOf(counts: Counts) {
  const complaintRate = counts.delivered > 0 ? counts.complained / counts.delivered : null;
  const finished = counts.delivered + counts.bounced;
  const hardBounceRate = finished > 0 ? counts.hard_bounced / finished : null;
  return {
    ...counts,
    complaint_rate: complaintRate,
    complaint_level: rateLevel(complaintRate, COMPLAINT_RATE),
    hard_bounce_rate: hardBounceRate,
    hard_bounce_level: rateLevel(hardBounceRate, HARD_BOUNCE_RATE),
  };
}

function add(into: Counts, status: string, bounceType: string | null, n: number): void {
  if (DELIVERED.includes(status)) into.delivered += n;
  if (status === 'complained') into.complained += n;
  if (status === 'bounced') {
    into.bounced += n;
    if (bounceType === 'hard') into.hard_bounced += n;
  }
}

export async function deliverabilityStats(db: Db, workspaceId: string) {
  const now = nowMs();
  const dayAgo = isoFromMs(now - 24 * HOUR_MS);
  const weekAgo = isoFromMs(now - 7 * 24 * HOUR_MS);
  const recent = sql<number>`case when ${sql.ref('created_at')} >= ${dayAgo} then 1 else 0 end`;
  const rows = await db
    .selectFrom('emails')
    .select(['sending_domain_id', 'status', 'bounce_type', recent.as('recent'), sql<number>`count(*)`.as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>=', weekAgo)
    .where('type', '=', 'outbound')
    .where('status', 'in', [...DELIVERED, 'bounced'])
    // By position: PostgreSQL would see the CASE of the GROUP BY, with its own parameter, as another expression.
    .groupBy([sql`1`, sql`2`, sql`3`, sql`4`])
    .execute();

  const workspace = { day: zero(), week: zero() };
  const byDomain = new Map<string, { day: Counts; week: Counts }>();
  for (const row of rows) {
    const n = Number(row.n);
    const targets = [workspace];
    if (row.sending_domain_id) {
      if (!byDomain.has(row.sending_domain_id)) byDomain.set(row.sending_domain_id, { day: zero(), week: zero() });
      targets.push(byDomain.get(row.sending_domain_id)!);
    }
    for (const target of targets) {
      add(target.week, row.status, row.bounce_type, n);
      if (Number(row.recent) === 1) add(target.day, row.status, row.bounce_type, n);
    }
  }
  const ids = [...byDomain.keys()];
  const names = ids.length
    ? await db.selectFrom('domains').select(['id', 'name']).where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute()
    : [];
  const nameOf = new Map(names.map((d) => [d.id, d.name]));
  return {
    object: 'deliverability' as const,
    thresholds: { complaint_rate: COMPLAINT_RATE, hard_bounce_rate: HARD_BOUNCE_RATE },
    workspace: { last_24h: windowOf(workspace.day), last_7d: windowOf(workspace.week) },
    domains: ids
      .map((id) => ({
        domain_id: id,
        name: nameOf.get(id) ?? '',
        last_24h: windowOf(byDomain.get(id)!.day),
        last_7d: windowOf(byDomain.get(id)!.week),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}
