// GET /emails (https://emailit.com/docs/email-api.md): one item per recipient, newest first, within
// the last 14 days unless `date_from` is given (created_at filters narrow it, never widen it).
import type { Executor } from '../../platform/db/database.ts';
import { nowMs, isoFromMs } from '../../platform/clock.ts';
import { applyListQuery, pageLimitList, type ListSpec, type Query } from '../../platform/http/lists.ts';
import { emailListItem } from './objects.ts';
import { BOUNCE_REASON_NAMES } from '../../mail/bounce-reasons.ts';

export const EMAIL_STATUSES = [
  'accepted',
  'scheduled',
  'delivered',
  'loaded',
  'clicked',
  'attempted',
  'bounced',
  'failed',
  'rejected',
  'suppressed',
  'received',
  'complained',
  'canceled',
  'held',
] as const;

export const EMAILS_DEFAULT_LIMIT = 25;
export const DEFAULT_WINDOW_DAYS = 14;
const DAY_MS = 86_400_000;

const EMAIL_LIST: ListSpec = {
  fields: {
    to: { type: 'string' },
    from: { type: 'string' },
    subject: { type: 'string' },
    status: { type: 'enum', values: EMAIL_STATUSES },
    tag: { type: 'string' },
    spam_score: { type: 'number' },
    created_at: { type: 'date' },
    updated_at: { type: 'date' },
    api_key_id: { type: 'string' },
    sending_domain_id: { type: 'string' },
    bounce_reason: { type: 'enum', values: BOUNCE_REASON_NAMES },
    bounce_type: { type: 'enum', values: ['hard', 'soft'] },
  },
  searchColumns: ['to', 'from', 'subject'],
  sortConvention: 'order-direction',
  defaultSortColumn: 'created_at',
  idColumn: 'id',
};

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `date_from`: a bare date starts at 00:00 UTC; a date-time at that instant. */
function windowStart(value: string | undefined, now: number): string {
  if (!value) return isoFromMs(now - DEFAULT_WINDOW_DAYS * DAY_MS);
  return isoFromMs(Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value));
}

/** `date_to`: a bare date runs through 23:59:59.999999 UTC (the returned bound is exclusive). */
function windowEnd(value: string | undefined): string | null {
  if (!value) return null;
  if (DATE_ONLY.test(value)) return isoFromMs(Date.parse(`${value}T00:00:00Z`) + DAY_MS);
  // An instant is included, with the rest of its millisecond.
  return isoFromMs(Date.parse(value) + 1);
}

export async function listEmails(db: Executor, workspaceId: string, query: Query, requestUrl: string) {
  const type = first(query.type) === 'inbound' ? 'inbound' : 'outbound';
  let qb = db
    .selectFrom('emails')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', type)
    .where('created_at', '>=', windowStart(first(query.date_from), nowMs()));
  const end = windowEnd(first(query.date_to));
  if (end) qb = qb.where('created_at', '<', end);
  qb = applyListQuery(qb, query, EMAIL_LIST);
  return pageLimitList(qb, query, requestUrl, EMAILS_DEFAULT_LIMIT, emailListItem);
}
