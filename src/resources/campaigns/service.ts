// Campaigns: https://emailit.com/docs/api-reference/campaigns.md.
// A campaign is a draft until sent; sending (now or at `scheduled_at`) hands it to the fan-out
// engine (engine.ts), which snapshots the recipients and turns them into emails a batch at a
// time. Statuses: draft → scheduled → queued → sending → sent; paused (on request, waiting
// for credits: status_reason insufficient_credits, or by the deliverability guardrails:
// complaint_rate, hard_bounce_rate, see guardrails.ts), canceled, archived.
import type { Db, Executor } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { isoFromDate, nowIso, nowMs } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { enqueueJob } from '../../platform/jobs.ts';
import { getCredits, insufficientCreditsError } from '../../platform/credits.ts';
import { ApiError, messageError } from '../../platform/http/errors.ts';
import { applyListQuery, countRows, fetchPage, pagingFrom, type ListSpec, type Query } from '../../platform/http/lists.ts';
import type { Principal } from '../../platform/http/auth.ts';
import type { AppContext } from '../../platform/context.ts';
import { getWorkspace } from '../workspaces/service.ts';
import { findSendingDomain } from '../domains/service.ts';
import { audiencesAmong } from '../audiences/service.ts';
import { parseScheduledAt } from '../emails/service.ts';
import { CAMPAIGN_STATUSES, CONTENT_TYPES } from './schemas.ts';
import {
  campaignEventObject,
  campaignListItem,
  campaignObject,
  createdCampaignObject,
  recipientsOf,
  requireCampaign,
  type CampaignRow,
  type RecipientEntry,
} from './records.ts';
import { BATCH_SIZE, CREDITS_PER_EMAIL, FANOUT_JOB } from './engine.ts';
import { countEligibleRecipients } from './snapshot.ts';

// What other features use of the unsubscribe links (automation mail to a contact carries one).
export { unsubscribeUrl } from './unsubscribe.ts';

type ContentType = (typeof CONTENT_TYPES)[number];

export interface CreateCampaignInput {
  name: string;
  subject?: string;
  from_email?: string;
  from_name?: string;
  reply_to?: string;
  html?: string;
  text?: string;
  preview_text?: string | null;
  content?: unknown;
  content_type?: ContentType;
}

export interface UpdateCampaignInput {
  name?: string;
  subject?: string;
  from_email?: string;
  from_name?: string;
  reply_to?: string;
  preview_text?: string | null;
  content?: unknown;
  content_type?: ContentType;
  recipients?: Array<{ audience_id?: string; exclude?: boolean }>;
}

const storedContent = (content: unknown) =>
  content === undefined || content === null ? null : typeof content === 'string' ? content : JSON.stringify(content);

async function emitCampaign(tx: Executor, row: CampaignRow, type: string): Promise<void> {
  await emitEvent(tx, row.workspace_id, type, campaignEventObject(row));
}

export async function createCampaign(db: Db, workspaceId: string, input: CreateCampaignInput) {
  const now = nowIso();
  const html = input.html ?? null;
  const text = input.text ?? null;
  // `html` when only html was given, `text` when only text was.
  const contentType: ContentType = input.content_type ?? (html === null && text !== null ? 'text' : 'html');
  const row: CampaignRow = {
    id: newId('cmp'),
    workspace_id: workspaceId,
    name: input.name.trim() || input.name,
    status: 'draft',
    status_reason: null,
    paused_reason: null,
    guardrails_overridden: 0,
    subject: input.subject ?? '',
    from_email: (input.from_email ?? '').trim(),
    from_name: input.from_name ?? '',
    reply_to: (input.reply_to ?? '').trim(),
    preview_text: input.preview_text ?? null,
    html,
    text,
    content: storedContent(input.content),
    content_type: contentType,
    recipients: '[]',
    scheduled_at: null,
    sent_at: null,
    completed_at: null,
    canceled_at: null,
    content_id: null,
    sending_domain_id: null,
    recipient_count: 0,
    created_at: now,
    updated_at: now,
  };
  await db.transaction().execute(async (tx) => {
    await tx.insertInto('campaigns').values(row).execute();
    await emitCampaign(tx, row, 'campaign.created');
  });
  return createdCampaignObject(row);
}

export async function getCampaign(db: Db, workspaceId: string, idOrName: string) {
  return campaignObject(await requireCampaign(db, workspaceId, idOrName));
}

const recipientsError = (message: string, problems: string[]) => new ApiError(422, { message, errors: { recipients: problems } });

/** The recipients list as stored: audience ids of the workspace, duplicates dropped. */
async function checkRecipients(
  db: Executor,
  workspaceId: string,
  given: NonNullable<UpdateCampaignInput['recipients']>,
): Promise<RecipientEntry[]> {
  const problems: string[] = [];
  const entries: RecipientEntry[] = [];
  const seen = new Set<string>();
  given.forEach((item, index) => {
    if (typeof item.audience_id !== 'string' || item.audience_id.trim() === '') {
      problems.push(`recipients.${index}.audience_id is required`);
      return;
    }
    const entry = { audience_id: item.audience_id.trim(), exclude: item.exclude === true };
    const key = `${entry.audience_id}:${entry.exclude}`;
    if (seen.has(key)) return;
    seen.add(key);
    entries.push(entry);
  });
  const found = new Set(
    (
      await audiencesAmong(
        db,
        workspaceId,
        entries.map((e) => e.audience_id),
      )
    ).map((a) => a.id),
  );
  for (const entry of entries)
    if (!found.has(entry.audience_id)) problems.push(`The audience ${entry.audience_id} does not exist in this workspace`);
  if (!entries.some((e) => !e.exclude)) problems.push('At least one audience must be included (exclude false)');
  if (problems.length > 0) throw recipientsError(problems[0], problems);
  return entries;
}

const EDITABLE = new Set(['draft', 'scheduled', 'paused']);

export async function updateCampaign(db: Db, workspaceId: string, idOrName: string, input: UpdateCampaignInput) {
  return db.transaction().execute(async (tx) => {
    const row = await requireCampaign(tx, workspaceId, idOrName, true);
    const changes: Partial<CampaignRow> = {};
    if (input.name !== undefined) changes.name = input.name.trim() || input.name;
    if (input.subject !== undefined) changes.subject = input.subject;
    if (input.from_email !== undefined) changes.from_email = input.from_email.trim();
    if (input.from_name !== undefined) changes.from_name = input.from_name;
    if (input.reply_to !== undefined) changes.reply_to = input.reply_to.trim();
    if (input.preview_text !== undefined) changes.preview_text = input.preview_text;
    if (input.content !== undefined) changes.content = storedContent(input.content);
    if (input.content_type !== undefined) changes.content_type = input.content_type;
    if (input.recipients !== undefined) changes.recipients = JSON.stringify(await checkRecipients(tx, workspaceId, input.recipients));
    if (Object.keys(changes).length === 0) return campaignObject(row);
    const sendingFields = Object.keys(changes).filter((field) => field !== 'name');
    if (sendingFields.length > 0 && !EDITABLE.has(row.status)) {
      throw messageError(
        409,
        'Campaign not editable',
        `A ${row.status} campaign can only be renamed; ${sendingFields.join(', ')} can be changed while it is a draft, scheduled or paused.`,
      );
    }
    changes.updated_at = nowIso();
    await tx.updateTable('campaigns').set(changes).where('id', '=', row.id).execute();
    const next = { ...row, ...changes };
    await emitCampaign(tx, next, 'campaign.updated');
    return campaignObject(next);
  });
}

// Lists ------------------------------------------------------------------------------------

const listSpec: ListSpec = {
  fields: {
    name: { type: 'string' },
    subject: { type: 'string' },
    status: { type: 'enum', values: CAMPAIGN_STATUSES },
    created_at: { type: 'date' },
    sent_at: { type: 'date' },
  },
  searchColumns: ['name', 'subject'],
  sortConvention: 'order-direction',
};

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export async function listCampaigns(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  let base = db.selectFrom('campaigns').selectAll().where('workspace_id', '=', workspaceId);
  const status = first(query.status)?.trim().toLowerCase();
  if (status === 'sending') base = base.where('status', 'in', ['queued', 'sending']);
  else if (status && (CAMPAIGN_STATUSES as readonly string[]).includes(status)) base = base.where('status', '=', status);
  else if (status !== 'all') base = base.where('status', '<>', 'archived'); // archived ones only when asked for
  const filtered = applyListQuery(base, query, listSpec);
  const paging = pagingFrom(query, 10);
  const [{ rows, hasNext }, total] = await Promise.all([fetchPage(filtered, paging), countRows(filtered)]);
  // The page URLs carry only page and limit.
  const path = requestUrl.split('?', 1)[0];
  const link = (page: number) => `${path}?page=${page}&limit=${paging.limit}`;
  return {
    data: rows.map(campaignListItem),
    next_page_url: hasNext ? link(paging.page + 1) : null,
    previous_page_url: paging.page > 1 ? link(paging.page - 1) : null,
    total_records: total,
  };
}

// Sending ----------------------------------------------------------------------------------

const UNSUBSCRIBE_TAG = /\{\{\s*unsubscribe_url\s*\}\}/;

/** 422 naming every prerequisite the campaign misses (docs/api.md, "Campaigns"), first one in `message`. */
function prerequisitesError(errors: Record<string, string[]>): ApiError {
  const first = Object.values(errors)[0][0];
  return new ApiError(422, { message: `The campaign cannot be sent: ${first}`, errors });
}

/** Sends now, or schedules a draft for a future `scheduled_at`. */
export async function sendCampaign(ctx: AppContext, principal: Principal, idOrName: string, scheduledAtInput: string | null | undefined) {
  const workspaceId = principal.workspaceId;
  const workspace = await getWorkspace(ctx.db, workspaceId);
  if (!workspace?.verified) {
    throw messageError(
      403,
      'Workspace not verified',
      'Campaigns can be sent only from a verified workspace (production access); this one is still in sandbox mode.',
    );
  }
  return ctx.db.transaction().execute(async (tx) => {
    const row = await requireCampaign(tx, workspaceId, idOrName, true);
    if (row.status !== 'draft' && row.status !== 'scheduled') {
      throw messageError(409, 'Campaign already sent', `Only a draft or scheduled campaign can be sent; this one is ${row.status}.`);
    }
    const errors: Record<string, string[]> = {};
    const add = (field: string, problem: string) => (errors[field] ??= []).push(problem);
    if (row.from_email === '') add('from_email', 'from_email is required');
    else {
      const domainName = row.from_email.includes('@') ? row.from_email.slice(row.from_email.lastIndexOf('@') + 1) : '';
      const domain = domainName ? await findSendingDomain(tx, ctx.secrets, workspaceId, domainName) : null;
      if (principal.sendingDomainId && domain?.id !== principal.sendingDomainId) {
        throw messageError(403, 'Domain not authorized', `This API key may only send from its own sending domain, not from ${domainName}.`);
      }
      // Bulk mail must carry a DKIM signature aligned with its From domain (Gmail and Yahoo sender
      // rules): Postlane signs as the domain, which it can only do once the domain is verified.
      if (!domain)
        add(
          'from_email',
          `from_email ${row.from_email} is not on a verified domain: add ${domainName || 'its domain'} and verify its DNS records, so that campaign mail is DKIM-signed by its From domain`,
        );
      else if (!domain.verified)
        add(
          'from_email',
          `from_email ${row.from_email} is not on a verified domain: verify the DNS records of ${domain.name} (DKIM, SPF, return path), so that campaign mail is DKIM-signed by its From domain`,
        );
    }
    if (row.subject.trim() === '') add('subject', 'a subject is required');
    if (!row.html && !row.text) add('html', 'html or text content is required');
    else if (!UNSUBSCRIBE_TAG.test(row.html ?? '') && !UNSUBSCRIBE_TAG.test(row.text ?? ''))
      add('html', 'the content must contain an {{unsubscribe_url}} link');
    const included = recipientsOf(row)
      .filter((r) => !r.exclude)
      .map((r) => r.audience_id);
    if (included.length === 0) add('recipients', 'at least one included audience is required');
    if (Object.keys(errors).length > 0) throw prerequisitesError(errors);

    // Enough credits for the first batch, and someone to send to.
    const n = await countEligibleRecipients(tx, workspaceId, included, BATCH_SIZE);
    if (n === 0) throw prerequisitesError({ recipients: ['the included audiences have no subscribed contacts to send to'] });
    const available = await getCredits(tx, workspaceId);
    if (available < n * CREDITS_PER_EMAIL) throw insufficientCreditsError(n * CREDITS_PER_EMAIL, available);

    const scheduledAt = parseScheduledAt(scheduledAtInput ?? undefined);
    const now = nowIso();
    const changes: Partial<CampaignRow> = scheduledAt
      ? { status: 'scheduled', scheduled_at: isoFromDate(scheduledAt), updated_at: now }
      : { status: 'queued', scheduled_at: null, updated_at: now };
    await tx.updateTable('campaigns').set(changes).where('id', '=', row.id).execute();
    // A rescheduled campaign's earlier job finds it not yet due and waits again: harmless.
    await enqueueJob(
      tx,
      FANOUT_JOB,
      { campaign_id: row.id },
      { runAt: scheduledAt ? scheduledAt.getTime() : nowMs(), maxAttempts: 1_000_000 },
    );
    const next = { ...row, ...changes };
    await emitCampaign(tx, next, scheduledAt ? 'campaign.scheduled' : 'campaign.queued');
    return campaignObject(next);
  });
}

type Transition = {
  changes: Partial<CampaignRow>;
  event: string | null;
  alsoEmit?: string[];
  after?: (tx: Executor, next: CampaignRow) => Promise<void>;
};

/** Applies a state change to the campaign, locked, in one transaction. */
async function transition(
  db: Db,
  workspaceId: string,
  idOrName: string,
  change: (row: CampaignRow, tx: Executor, now: string) => Promise<Transition>,
) {
  return db.transaction().execute(async (tx) => {
    const row = await requireCampaign(tx, workspaceId, idOrName, true);
    const { changes, event, alsoEmit = [], after } = await change(row, tx, nowIso());
    if (Object.keys(changes).length > 0) await tx.updateTable('campaigns').set(changes).where('id', '=', row.id).execute();
    const next = { ...row, ...changes };
    if (event) for (const type of [event, ...alsoEmit]) await emitCampaign(tx, next, type);
    if (event && after) await after(tx, next);
    return campaignObject(next);
  });
}

const refused = (what: string, row: CampaignRow, why: string) =>
  messageError(409, `Campaign cannot be ${what}`, why.replace('{status}', row.status));

/** Cancel a draft or a sending campaign: its pending recipients are dropped in one UPDATE;
 *  emails already created go out (they are not recalled). A scheduled one must be deleted. */
export function cancelCampaign(db: Db, workspaceId: string, idOrName: string) {
  return transition(db, workspaceId, idOrName, async (row, tx, now) => {
    if (row.status === 'scheduled') throw refused('canceled', row, 'A scheduled campaign cannot be canceled; delete it to stop the send.');
    if (!['draft', 'queued', 'sending', 'paused'].includes(row.status))
      throw refused('canceled', row, 'Only a draft or sending campaign can be canceled; this one is {status}.');
    await tx
      .updateTable('campaign_recipients')
      .set({ status: 'canceled' })
      .where('campaign_id', '=', row.id)
      .where('status', '=', 'pending')
      .execute();
    return {
      changes: { status: 'canceled', status_reason: null, paused_reason: null, canceled_at: now, updated_at: now },
      event: 'campaign.canceled',
    };
  });
}

/** Why a campaign is paused by the service itself rather than on request (the guardrails). */
export interface PauseCause {
  /** Its status_reason, such as complaint_rate. */
  reason: string;
  /** A sentence for a person, kept as paused_reason. */
  message: string;
  /** Runs in the pause's transaction, only when it did pause the campaign (notices to the members). */
  alongside?(tx: Executor, campaign: CampaignRow): Promise<void>;
}

/** Reasons a campaign was paused by the guardrails: resuming it is a person's decision to override them. */
export const GUARDRAIL_REASONS = new Set(['complaint_rate', 'hard_bounce_rate']);

/** Pause on request, or with a `cause` (the guardrails): that pause also emits campaign.updated, says
 *  why, and leaves alone a campaign paused by someone already or whose guardrails were overridden. */
export function pauseCampaign(db: Db, workspaceId: string, idOrName: string, cause?: PauseCause) {
  return transition(db, workspaceId, idOrName, async (row, _tx, now) => {
    if (cause) {
      const stoppable =
        ['queued', 'sending'].includes(row.status) || (row.status === 'paused' && row.status_reason === 'insufficient_credits');
      if (!stoppable || row.guardrails_overridden === 1) return { changes: {}, event: null };
      const changes = { status: 'paused', status_reason: cause.reason, paused_reason: cause.message, updated_at: now };
      return { changes, event: 'campaign.paused', alsoEmit: ['campaign.updated'], after: cause.alongside };
    }
    if (row.status === 'paused' && row.status_reason === 'paused') return { changes: {}, event: null };
    if (!['queued', 'sending', 'paused'].includes(row.status))
      throw refused('paused', row, 'Only a sending campaign can be paused; this one is {status}.');
    return { changes: { status: 'paused', status_reason: 'paused', updated_at: now }, event: 'campaign.paused' };
  });
}

export function resumeCampaign(db: Db, workspaceId: string, idOrName: string) {
  return transition(db, workspaceId, idOrName, async (row, tx, now) => {
    if (row.status !== 'paused') throw refused('resumed', row, 'Only a paused campaign can be resumed; this one is {status}.');
    await enqueueJob(tx, FANOUT_JOB, { campaign_id: row.id }, { maxAttempts: 1_000_000 });
    const overridden = row.guardrails_overridden === 1 || GUARDRAIL_REASONS.has(row.status_reason ?? '') ? 1 : 0;
    const changes = {
      status: row.sent_at ? 'sending' : 'queued',
      status_reason: null,
      paused_reason: null,
      guardrails_overridden: overridden,
      updated_at: now,
    };
    return { changes, event: 'campaign.resumed' };
  });
}

export function archiveCampaign(db: Db, workspaceId: string, idOrName: string) {
  return transition(db, workspaceId, idOrName, async (row, _tx, now) => {
    if (row.status === 'archived') return { changes: {}, event: null };
    if (!['draft', 'sent', 'canceled'].includes(row.status))
      throw refused('archived', row, 'Only a draft, sent or canceled campaign can be archived; this one is {status}.');
    return { changes: { status: 'archived', updated_at: now }, event: 'campaign.archived' };
  });
}

/** Permanent; only for a campaign that has not been sent (no email was created for it). */
export async function deleteCampaign(db: Db, workspaceId: string, idOrName: string) {
  return db.transaction().execute(async (tx) => {
    const row = await requireCampaign(tx, workspaceId, idOrName, true);
    if (row.sent_at !== null || ['sending', 'sent'].includes(row.status)) {
      throw refused('deleted', row, 'A campaign that has been sent cannot be deleted; archive it instead.');
    }
    await tx.deleteFrom('campaign_recipients').where('campaign_id', '=', row.id).execute();
    await tx.deleteFrom('campaigns').where('id', '=', row.id).execute();
    await emitCampaign(tx, row, 'campaign.deleted');
    return { object: 'campaign' as const, id: row.id, deleted: true as const };
  });
}
