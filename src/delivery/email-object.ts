// The email object of email.* events (https://emailit.com/docs/webhooks/event-types.md): made
// here, beside the intake that emits the first of them, and used by every status change.
import type { EmailRow } from './tables.ts';

export function parseMeta(meta: string | null): Record<string, string> | null {
  return meta ? (JSON.parse(meta) as Record<string, string>) : null;
}

/** The columns an email.* event object is made of (a status change returns just these). */
export const EMAIL_EVENT_COLUMNS = [
  'id',
  'workspace_id',
  'from',
  'to',
  'subject',
  'status',
  'bounce_reason',
  'bounce_type',
  'meta',
  'scheduled_at',
  'created_at',
  'updated_at',
] as const;
export type EmailEventRow = Pick<EmailRow, (typeof EMAIL_EVENT_COLUMNS)[number]>;

/** The event object of email.* status events (https://emailit.com/docs/webhooks/event-types.md). */
export function emailEventObject(row: EmailEventRow, type: string): Record<string, unknown> {
  const base = { id: row.id, object: 'email', from: row.from, to: row.to, subject: row.subject };
  if (type === 'email.accepted') return { ...base, meta: parseMeta(row.meta), timestamp: row.created_at };
  if (type === 'email.scheduled')
    return { ...base, meta: parseMeta(row.meta), scheduled_at: row.scheduled_at, timestamp: row.created_at, created_at: row.created_at };
  if (type === 'email.received') return { ...base, created_at: row.created_at };
  // Bounces, failures and deferrals say why, as a documented reason (docs/delivery.md).
  if (type === 'email.bounced' || type === 'email.failed' || type === 'email.attempted' || type === 'email.complained') {
    return {
      ...base,
      status: row.status,
      bounce_reason: row.bounce_reason,
      bounce_type: row.bounce_type,
      meta: parseMeta(row.meta),
      updated_at: row.updated_at,
      created_at: row.created_at,
    };
  }
  return { ...base, status: row.status, meta: parseMeta(row.meta), updated_at: row.updated_at, created_at: row.created_at };
}
