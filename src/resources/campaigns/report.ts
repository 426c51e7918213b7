// A campaign's figures (GET /v2/campaigns/{id}/report), counted from the recipient snapshot,
// its emails and their tracking hits; correct while the campaign is still sending.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { requireCampaign } from './records.ts';

export async function campaignReport(db: Db, workspaceId: string, idOrName: string) {
  const campaign = await requireCampaign(db, workspaceId, idOrName);
  const byRecipient = await db
    .selectFrom('campaign_recipients')
    .select(['status', sql<number>`count(*)`.as('n'), sql<number>`count(unsubscribed_at)`.as('unsubscribed')])
    .where('campaign_id', '=', campaign.id)
    .groupBy('status')
    .execute();
  const byEmail = await db
    .selectFrom('campaign_recipients as r')
    .innerJoin('emails as e', 'e.id', 'r.email_id')
    .select(['e.status', 'e.bounce_type', sql<number>`count(*)`.as('n')])
    .where('r.campaign_id', '=', campaign.id)
    .groupBy(['e.status', 'e.bounce_type'])
    .execute();
  const hits = await db
    .selectFrom('campaign_recipients as r')
    .innerJoin('tracking_hits as h', 'h.email_id', 'r.email_id')
    .select(['h.kind', sql<number>`count(*)`.as('n'), sql<number>`count(distinct h.email_id)`.as('unique_n')])
    .where('r.campaign_id', '=', campaign.id)
    .groupBy('h.kind')
    .execute();
  const recipients = (status: string) => Number(byRecipient.find((r) => r.status === status)?.n ?? 0);
  const emails = (...statuses: string[]) => byEmail.filter((r) => statuses.includes(r.status)).reduce((sum, r) => sum + Number(r.n), 0);
  const hit = (kind: string) => hits.find((h) => h.kind === kind);
  const delivered = emails('delivered', 'loaded', 'clicked', 'complained');
  const bounced = emails('bounced');
  const hardBounced = byEmail.filter((r) => r.status === 'bounced' && r.bounce_type === 'hard').reduce((sum, r) => sum + Number(r.n), 0);
  const complained = emails('complained');
  return {
    object: 'campaign_report' as const,
    campaign_id: campaign.id,
    status: campaign.status,
    recipients: byRecipient.reduce((sum, r) => sum + Number(r.n), 0),
    pending: recipients('pending'),
    sent: recipients('queued'),
    delivered,
    bounced,
    hard_bounced: hardBounced,
    failed: emails('failed'),
    complained,
    // The rates the deliverability guardrails watch (guardrails.ts), over the sends so far.
    complaint_rate: delivered > 0 ? complained / delivered : null,
    hard_bounce_rate: delivered + bounced > 0 ? hardBounced / (delivered + bounced) : null,
    loaded: Number(hit('load')?.n ?? 0),
    clicked: Number(hit('click')?.n ?? 0),
    unique_loads: Number(hit('load')?.unique_n ?? 0),
    unique_clicks: Number(hit('click')?.unique_n ?? 0),
    unsubscribed: byRecipient.reduce((sum, r) => sum + Number(r.unsubscribed), 0),
    skipped: recipients('skipped'),
    canceled: recipients('canceled'),
  };
}
