// Deliverability guardrails (docs/deliverability.md): a campaign whose recipients complain or
// hard-bounce past what receivers tolerate is paused before it sends more, as the pause API
// would pause it, saying why, and the workspace's members are told.
//
// The check runs as outcomes arrive, off the delivery path: a complaint or a hard bounce of a
// campaign email (its email.complained / email.bounced event) queues one `campaign.guardrails`
// job for the campaign, unless one is waiting already, due a moment later so that a burst of
// bounces is counted once, and later still after a slow check (runGuardrailsJob). Deliveries
// (2xx) queue nothing: the hot path is unchanged.
import { sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.ts';
import { nowMs } from '../../platform/clock.ts';
import { enqueueJob, RetryJobAt, type Job } from '../../platform/jobs.ts';
import type { EmittedEvent, EventSubscriber } from '../../platform/events.ts';
import { COMPLAINT_RATE, HARD_BOUNCE_RATE, percent } from '../../mail/bulk-sender-rules.ts';
import { notifyWorkspaceOwners } from '../notifications/service.ts';
import { pauseCampaign, type PauseCause } from './service.ts';
import type { CampaignRow } from './records.ts';

export const GUARDRAILS_JOB = 'campaign.guardrails';
/** Outcomes within this time of the first are counted by one check. */
const CHECK_DELAY_MS = 1000;

/** Complaints are judged once this many messages were delivered (a few complaints among the
 *  first hundred say little), or SMALL_CAMPAIGN_MIN_DELIVERED for a campaign smaller than that. */
export const COMPLAINT_MIN_DELIVERED = 1000;
export const SMALL_CAMPAIGN_MIN_DELIVERED = 200;
/** Hard bounces are judged once this many messages have an outcome (delivered or bounced). */
export const HARD_BOUNCE_MIN_OUTCOMES = 200;

/** What a campaign's emails came to so far. */
export interface CampaignOutcomes {
  /** Accepted by the recipient's server (opened, clicked or complained since included). */
  delivered: number;
  complained: number;
  bounced: number;
  hardBounced: number;
}

const DELIVERED = ['delivered', 'loaded', 'clicked', 'complained'];

/** One grouped read through the recipient snapshot's primary key and the emails' (the same path
 *  as the campaign's report): cost in proportion to the emails sent so far. */
export async function campaignOutcomes(db: Executor, campaignId: string): Promise<CampaignOutcomes> {
  const rows = await db
    .selectFrom('campaign_recipients as r')
    .innerJoin('emails as e', 'e.id', 'r.email_id')
    .select(['e.status', 'e.bounce_type', sql<number>`count(*)`.as('n')])
    .where('r.campaign_id', '=', campaignId)
    .where('r.status', '=', 'queued')
    .where('e.status', 'in', [...DELIVERED, 'bounced'])
    .groupBy(['e.status', 'e.bounce_type'])
    .execute();
  const sum = (match: (row: (typeof rows)[number]) => boolean) => rows.filter(match).reduce((total, row) => total + Number(row.n), 0);
  return {
    delivered: sum((row) => DELIVERED.includes(row.status)),
    complained: sum((row) => row.status === 'complained'),
    bounced: sum((row) => row.status === 'bounced'),
    hardBounced: sum((row) => row.status === 'bounced' && row.bounce_type === 'hard'),
  };
}

/** The guardrail the campaign's outcomes break, if any. */
export function brokenGuardrail(outcomes: CampaignOutcomes, recipientCount: number): Omit<PauseCause, 'alongside'> | null {
  const minDelivered = recipientCount < COMPLAINT_MIN_DELIVERED ? SMALL_CAMPAIGN_MIN_DELIVERED : COMPLAINT_MIN_DELIVERED;
  if (outcomes.delivered >= minDelivered) {
    const rate = outcomes.complained / outcomes.delivered;
    if (rate > COMPLAINT_RATE.limit) {
      return {
        reason: 'complaint_rate',
        message:
          `Paused automatically: ${outcomes.complained} of ${outcomes.delivered} delivered messages were reported as spam (${percent(rate)}), ` +
          `past the ${percent(COMPLAINT_RATE.limit)} complaint rate Gmail and Yahoo allow bulk senders.`,
      };
    }
  }
  const finished = outcomes.delivered + outcomes.bounced;
  if (finished >= HARD_BOUNCE_MIN_OUTCOMES) {
    const rate = outcomes.hardBounced / finished;
    if (rate > HARD_BOUNCE_RATE.limit) {
      return {
        reason: 'hard_bounce_rate',
        message:
          `Paused automatically: ${outcomes.hardBounced} of ${finished} messages bounced for good (${percent(rate)} hard bounces), ` +
          `past the ${percent(HARD_BOUNCE_RATE.limit)} limit: the list likely holds many addresses that no longer exist.`,
      };
    }
  }
  return null;
}

const STILL_SENDING = (row: Pick<CampaignRow, 'status' | 'status_reason' | 'guardrails_overridden'>) =>
  row.guardrails_overridden !== 1 &&
  (['queued', 'sending'].includes(row.status) || (row.status === 'paused' && row.status_reason === 'insufficient_credits'));

/** The check of one campaign (the job): pauses it when a guardrail is broken. Whether it paused. */
export async function checkCampaignGuardrails(db: Db, campaignId: string): Promise<boolean> {
  const row = await db
    .selectFrom('campaigns')
    .select(['id', 'workspace_id', 'name', 'status', 'status_reason', 'guardrails_overridden', 'recipient_count'])
    .where('id', '=', campaignId)
    .executeTakeFirst();
  if (!row || !STILL_SENDING(row)) return false; // nothing left to stop
  const broken = brokenGuardrail(await campaignOutcomes(db, row.id), Number(row.recipient_count));
  if (!broken) return false;
  const paused = await pauseCampaign(db, row.workspace_id, row.id, {
    ...broken,
    alongside: (tx, campaign) =>
      notifyWorkspaceOwners(tx, campaign.workspace_id, {
        subject: `Campaign "${campaign.name}" was paused: too many ${broken.reason === 'complaint_rate' ? 'spam complaints' : 'hard bounces'}`,
        text:
          `Your campaign "${campaign.name}" (${campaign.id}) was paused before sending to more recipients.\n\n${broken.message}\n\n` +
          'Emails already queued still go out. Check the list and the content before resuming the campaign: ' +
          'once you resume it, the guardrails leave this campaign alone.',
      }).then(() => undefined),
  });
  return paused.status === 'paused' && paused.status_reason === broken.reason;
}

// A check of a large campaign is not free (docs/deliverability.md, "Cost": about half a second for
// 100,000 emails on SQLite, whose one connection the API and deliveries share meanwhile), so a
// campaign's checks are spaced: the next waits CHECK_SPACING times as long as the last one took.
const CHECK_SPACING = 20;
const lastChecks = new Map<string, { endedAt: number; tookMs: number }>();

export async function runGuardrailsJob(job: Job<{ campaign_id?: unknown }>, db: Db): Promise<void> {
  const campaignId = job.payload?.campaign_id;
  if (typeof campaignId !== 'string') return;
  const last = lastChecks.get(campaignId);
  const due = last ? last.endedAt + Math.max(CHECK_DELAY_MS, last.tookMs * CHECK_SPACING) : 0;
  // Waiting, the job still stands for every outcome recorded until it runs (queueCheck adds none).
  if (nowMs() < due) throw new RetryJobAt(due, 'spacing the checks of this campaign');
  const started = nowMs();
  await checkCampaignGuardrails(db, campaignId);
  if (lastChecks.size >= 1000) lastChecks.clear();
  lastChecks.set(campaignId, { endedAt: nowMs(), tookMs: nowMs() - started });
}

/** The campaign a complaint or a hard bounce event is about, or null. */
function campaignOf(event: EmittedEvent): string | null {
  const isComplaint = event.type === 'email.complained';
  const isHardBounce = event.type === 'email.bounced' && event.object.bounce_type === 'hard';
  if (!isComplaint && !isHardBounce) return null;
  const meta = event.object.meta as Record<string, unknown> | null | undefined;
  return typeof meta?.campaign_id === 'string' ? meta.campaign_id : null;
}

/** One check per campaign, keyed by it: one waiting will count this outcome too, and one
 *  running now runs once more after it (a keyed enqueue, src/platform/jobs.ts). */
async function queueCheck(tx: Executor, campaignId: string): Promise<void> {
  await enqueueJob(tx, GUARDRAILS_JOB, { campaign_id: campaignId }, { runAt: nowMs() + CHECK_DELAY_MS, maxAttempts: 5, key: campaignId });
}

/** Queues the checks in the transaction that records the outcome (so none is lost). */
export const guardrailsEventHook: EventSubscriber = {
  async react(tx, event) {
    const campaignId = campaignOf(event);
    if (campaignId) await queueCheck(tx, campaignId);
  },
  async plan(_tx, events) {
    const campaignIds = [...new Set(events.map(campaignOf).filter((id): id is string => id !== null))];
    if (campaignIds.length === 0) return null;
    return {
      async after(tx) {
        for (const id of campaignIds) await queueCheck(tx, id);
      },
    };
  },
};
