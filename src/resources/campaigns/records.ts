// Campaign rows as the API shows them (https://emailit.com/docs/api-reference/campaigns.md): empty
// strings until set, the body never echoed, create and list responses leaving out what the spec
// says they omit.
import type { Selectable } from 'kysely';
import { dialectOf, type Executor } from '../../platform/db/database.ts';
import { looksLikeId } from '../../platform/ids.ts';
import { plainError } from '../../platform/http/errors.ts';
import type { CampaignsTable } from './tables.ts';

export type CampaignRow = Selectable<CampaignsTable>;
export interface RecipientEntry {
  audience_id: string;
  exclude: boolean;
}

export const recipientsOf = (row: Pick<CampaignRow, 'recipients'>): RecipientEntry[] => JSON.parse(row.recipients) as RecipientEntry[];

export function campaignListItem(row: CampaignRow) {
  return {
    object: 'campaign' as const,
    id: row.id,
    name: row.name,
    status: row.status,
    subject: row.subject,
    from_email: row.from_email,
    from_name: row.from_name,
    scheduled_at: row.scheduled_at,
    sent_at: row.sent_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function createdCampaignObject(row: CampaignRow) {
  const { scheduled_at: _s, sent_at: _t, ...rest } = campaignListItem(row);
  return { ...rest, reply_to: row.reply_to, preview_text: row.preview_text, content_type: row.content_type };
}

export function campaignObject(row: CampaignRow) {
  return {
    ...campaignListItem(row),
    reply_to: row.reply_to,
    preview_text: row.preview_text,
    content_type: row.content_type,
    recipients: recipientsOf(row),
    status_reason: row.status_reason,
    paused_reason: row.paused_reason,
  };
}

/** The object of campaign.* events (campaign.created, plus updated_at). */
export function campaignEventObject(row: CampaignRow) {
  return campaignListItem(row);
}

/** The campaign named by a cmp_ id or by its name (the newest of that name). */
export async function findCampaign(db: Executor, workspaceId: string, idOrName: string, lock = false): Promise<CampaignRow | undefined> {
  let query = db.selectFrom('campaigns').selectAll().where('workspace_id', '=', workspaceId);
  query = looksLikeId(idOrName, 'cmp')
    ? query.where('id', '=', idOrName)
    : query.where('name', '=', idOrName).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1);
  // PostgreSQL: state changes of one campaign and its fan-out's batches take turns (SQLite
  // transactions are serial anyway).
  if (lock && dialectOf(db) === 'postgres') query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function requireCampaign(db: Executor, workspaceId: string, idOrName: string, lock = false): Promise<CampaignRow> {
  const row = await findCampaign(db, workspaceId, idOrName, lock);
  if (!row) throw plainError(404, 'Campaign not found');
  return row;
}
