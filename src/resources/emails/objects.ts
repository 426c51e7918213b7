// The shapes emails take in responses and event payloads (https://emailit.com/docs/email-api.md,
// https://emailit.com/docs/webhooks/event-types.md).
import type { Selectable } from 'kysely';
import type { EmailsTable } from './tables.ts';
import type { BounceReason } from '../../mail/bounce-reasons.ts';

export type EmailRow = Selectable<EmailsTable>;

export function parseMeta(meta: string | null): Record<string, string> | null {
  return meta ? (JSON.parse(meta) as Record<string, string>) : null;
}

/** The columns an email.* event object is made of (a status change returns just these). */
export const EMAIL_EVENT_COLUMNS = ['id', 'workspace_id', 'from', 'to', 'subject', 'status', 'bounce_reason', 'bounce_type', 'meta', 'scheduled_at', 'created_at', 'updated_at'] as const;
export type EmailEventRow = Pick<EmailRow, (typeof EMAIL_EVENT_COLUMNS)[number]>;

/** The event object of email.* status events (https://emailit.com/docs/webhooks/event-types.md). */
export function emailEventObject(row: EmailEventRow, type: string): Record<string, unknown> {
  const base = { id: row.id, object: 'email', from: row.from, to: row.to, subject: row.subject };
  if (type === 'email.accepted') return { ...base, meta: parseMeta(row.meta), timestamp: row.created_at };
  if (type === 'email.scheduled') return { ...base, meta: parseMeta(row.meta), scheduled_at: row.scheduled_at, timestamp: row.created_at, created_at: row.created_at };
  if (type === 'email.received') return { ...base, created_at: row.created_at };
  // Bounces, failures and deferrals say why, as a documented reason (docs/delivery.md).
  if (type === 'email.bounced' || type === 'email.failed' || type === 'email.attempted' || type === 'email.complained') {
    return { ...base, status: row.status, bounce_reason: row.bounce_reason, bounce_type: row.bounce_type, meta: parseMeta(row.meta), updated_at: row.updated_at, created_at: row.created_at };
  }
  return { ...base, status: row.status, meta: parseMeta(row.meta), updated_at: row.updated_at, created_at: row.created_at };
}

/** An item of GET /emails. */
export function emailListItem(row: EmailRow) {
  return {
    object: 'email' as const,
    id: row.id,
    type: row.type,
    from: row.from,
    to: row.to,
    subject: row.subject,
    status: row.status,
    size: Number(row.size),
    scheduled_at: row.scheduled_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    meta: parseMeta(row.meta),
    bounce_reason: row.bounce_reason as BounceReason | null,
    bounce_type: row.bounce_type as 'hard' | 'soft' | null,
  };
}

/** The send response: the first recipient's email, plus `ids` when there are several. */
export function sendResponse(rows: EmailRow[], recipients: { to: string[]; cc: string[]; bcc: string[] }) {
  const first = rows[0];
  return {
    object: 'email' as const,
    id: first.id,
    ...(rows.length > 1 ? { ids: Object.fromEntries(rows.map((row) => [row.to, row.id])) } : {}),
    token: first.token,
    message_id: first.message_id,
    from: first.from,
    to: recipients.to,
    ...(recipients.cc.length ? { cc: recipients.cc } : {}),
    ...(recipients.bcc.length ? { bcc: recipients.bcc } : {}),
    subject: first.subject,
    status: first.status,
    scheduled_at: first.scheduled_at,
    created_at: first.created_at,
    tracking: { loads: first.track_loads === 1, clicks: first.track_clicks === 1 },
  };
}
