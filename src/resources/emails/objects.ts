// The shapes emails take in responses and event payloads (https://emailit.com/docs/email-api.md,
// https://emailit.com/docs/webhooks/event-types.md).
import type { BounceReason } from '../../mail/bounce-reasons.ts';
import type { EmailRow } from '../../delivery/tables.ts';
import { parseMeta } from '../../delivery/email-object.ts';

// The row and the event object belong to the intake that makes them (src/delivery/).
export type { EmailRow } from '../../delivery/tables.ts';
export { EMAIL_EVENT_COLUMNS, emailEventObject, parseMeta, type EmailEventRow } from '../../delivery/email-object.ts';

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
