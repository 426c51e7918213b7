// POST /emails/{id}/retry (https://emailit.com/docs/email-api.md,
// https://emailit.com/docs/logs/email-statuses.md): a bounced, failed, suppressed or held email
// younger than 30 days, whose content is still stored, is sent again to the same recipient as a new
// email (source `retry`, `original_id` set, one credit, no email.accepted), even when the recipient
// is suppressed: retrying is the user's explicit decision.
import type { AppContext } from '../../platform/context.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { messageError } from '../../platform/http/errors.ts';
import { nowMs } from '../../platform/clock.ts';
import { acceptMessage } from './accept.ts';
import type { ParsedAddress } from './addresses.ts';
import { parseMeta } from './objects.ts';
import { findEmail, loadContent } from './retrieved.ts';

export const RETRYABLE_STATUSES = ['bounced', 'failed', 'suppressed', 'held'];
export const RETRY_MAX_AGE_MS = 30 * 86_400_000;

const cannotRetry = (message: string) => messageError(422, 'Cannot retry email', message);

export async function retryEmail(ctx: AppContext, principal: Principal, id: string) {
  const row = await findEmail(ctx.db, principal.workspaceId, id);
  if (!RETRYABLE_STATUSES.includes(row.status)) {
    throw cannotRetry(`Only bounced, failed, suppressed or held emails can be retried; this email is ${row.status}.`);
  }
  if (nowMs() - Date.parse(row.created_at) > RETRY_MAX_AGE_MS) {
    throw cannotRetry('Only emails younger than 30 days can be retried.');
  }
  const content = await loadContent(ctx.db, row.content_id);
  if (!content.message) {
    throw cannotRetry('The content of this email was purged after the retention period; it cannot be sent again.');
  }
  const stored = content.message;
  const key = row.to.toLowerCase();
  const recipient: ParsedAddress = [...stored.to, ...stored.cc, ...stored.bcc].find((a) => a.address.toLowerCase() === key) ?? {
    address: row.to,
    name: '',
  };
  const accepted = await acceptMessage(ctx, principal, {
    message: { ...stored, to: [recipient], cc: [], bcc: [] },
    fromHeader: row.from,
    meta: parseMeta(row.meta),
    scheduledAt: null,
    tracking: { loads: row.track_loads === 1, clicks: row.track_clicks === 1 },
    source: 'retry',
    originalId: row.id,
    // The user asked for this one email; a suppression of the recipient stays for other sends.
    ignoreSuppressions: true,
    // Only send and forward count against the sending limits (https://emailit.com/docs/limits.md).
    limitUnits: 0,
  });
  const email = accepted.rows[0];
  return {
    object: 'email' as const,
    id: email.id,
    original_id: row.id,
    token: email.token,
    message_id: email.message_id,
    from: email.from,
    to: email.to,
    subject: email.subject,
    status: email.status,
    created_at: email.created_at,
    message: `Email ${row.id} was queued again as ${email.id}.`,
  };
}
