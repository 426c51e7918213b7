// POST /emails/{id}/forward (https://emailit.com/docs/email-api.md): an outgoing email's stored
// content sent to new recipients as a new email; the original is unchanged. With `include_headers`
// (the default) the content is wrapped in a forwarded-message block with the note; without it the
// original is resent as it was. Sending rules, credits, limits and Idempotency-Key apply as for a
// send, plus the hourly forward limit, which replays also meet and count against.
import type { AppContext } from '../../platform/context.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { ApiError, excerpt, messageError, sendValidationError } from '../../platform/http/errors.ts';
import { checkForwardLimit, checkSendLimits, countForward, rateLimitHeaders } from '../../platform/limits.ts';
import { getWorkspace } from '../workspaces/service.ts';
import type { AcceptRequest } from './accept.ts';
import { acceptIdempotently, sendResponseFor, type SendOutcome } from './send.ts';
import { parseAddressField, type ParsedAddress } from './addresses.ts';
import { hasAllowedExtension } from './attachments.ts';
import type { StoredMessage } from './content.ts';
import type { EmailRow } from './objects.ts';
import { MAX_RECIPIENTS_PER_FIELD } from './send-request.ts';
import { findEmail, loadContent, mailDate } from './retrieved.ts';

export interface ForwardBody {
  to?: unknown;
  include_headers?: unknown;
  comment?: unknown;
  body?: unknown;
  html?: unknown;
  text?: unknown;
  from?: unknown;
  subject?: unknown;
}

interface ForwardInput {
  to: ParsedAddress[];
  includeHeaders: boolean;
  comment: string | null;
  html: string | null;
  text: string | null;
  from: { parsed: ParsedAddress; header: string } | null;
  subject: string | null;
}

const cannotForward = (message: string) => messageError(422, 'Cannot forward email', message);

function validateForward(body: unknown): ForwardInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw sendValidationError(['The request body must be a JSON object.']);
  const input = body as ForwardBody;
  const errors: string[] = [];
  const text = (name: string, value: unknown): string | null => {
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') errors.push(`The ${name} field must be a string.`);
    return typeof value === 'string' ? value : null;
  };

  let to: ParsedAddress[] = [];
  const toValue = input.to;
  if (toValue === undefined || toValue === null || toValue === '' || (Array.isArray(toValue) && toValue.length === 0)) {
    errors.push('The to field is required.');
  } else if (typeof toValue !== 'string' && !(Array.isArray(toValue) && toValue.every((v) => typeof v === 'string'))) {
    errors.push('The to field must be a string or an array of strings.');
  } else {
    const { addresses, invalid } = parseAddressField(toValue);
    for (const entry of invalid) errors.push(`The to field contains an invalid email address: ${excerpt(entry)}`);
    const seen = new Set<string>();
    to = addresses.filter((a) => !seen.has(a.address.toLowerCase()) && seen.add(a.address.toLowerCase()));
    if (to.length > MAX_RECIPIENTS_PER_FIELD) errors.push(`The to field may not have more than ${MAX_RECIPIENTS_PER_FIELD} recipients.`);
    if (invalid.length === 0 && to.length === 0) errors.push('The to field is required.');
  }

  // Without include_headers the original is resent unchanged; the block and the
  // `Fwd: ` subject belong to include_headers: true only.
  let includeHeaders = false;
  if (input.include_headers !== undefined && input.include_headers !== null) {
    if (typeof input.include_headers === 'boolean') includeHeaders = input.include_headers;
    else errors.push('The include_headers field must be a boolean.');
  }
  const comment = text('comment', input.comment) ?? text('body', input.body);
  const html = text('html', input.html);
  const note = text('text', input.text);
  const subject = text('subject', input.subject);
  const fromText = text('from', input.from);
  let from: ForwardInput['from'] = null;
  if (fromText !== null) {
    const { addresses, invalid } = parseAddressField(fromText);
    if (invalid.length > 0 || addresses.length !== 1) errors.push('The from field must be a single valid email address.');
    else from = { parsed: addresses[0], header: fromText.trim() };
  }
  if (subject !== null && subject.trim() === '') errors.push('The subject field must not be empty.');
  if (errors.length > 0) throw sendValidationError(errors);
  return { to, includeHeaders, comment, html, text: note, from, subject };
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The forwarded content: the note, a block naming the original's sender, date, subject and
 *  recipient, then the original bodies. */
function wrapForwarded(row: EmailRow, original: StoredMessage, input: ForwardInput): { html: string | null; text: string | null } {
  const facts: Array<[string, string]> = [
    ['From', row.from],
    ['Date', mailDate(row.created_at)],
    ['Subject', original.subject],
    ['To', row.to],
  ];
  const hasHtml = Boolean(original.html) || input.html !== null;
  const hasText = Boolean(original.text) || !hasHtml;

  let html: string | null = null;
  if (hasHtml) {
    const note = input.html ?? (input.comment ? `<p>${escapeHtml(input.comment).replace(/\r?\n/g, '<br>')}</p>` : '');
    const block = `<div>---------- Forwarded message ---------<br>${facts.map(([k, v]) => `${k}: ${escapeHtml(v)}`).join('<br>')}</div><br>`;
    const body = original.html ? original.html : original.text ? `<pre>${escapeHtml(original.text)}</pre>` : '';
    html = `${note}${block}${body}`;
  }
  let text: string | null = null;
  if (hasText) {
    const note = input.text ?? input.comment ?? '';
    const block = `---------- Forwarded message ---------\n${facts.map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n`;
    text = `${note ? `${note}\n\n` : ''}${block}${original.text ?? ''}`;
  }
  return { html, text };
}

async function buildForward(ctx: AppContext, principal: Principal, id: string, body: unknown): Promise<AcceptRequest> {
  const input = validateForward(body);
  const row = await findEmail(ctx.db, principal.workspaceId, id);
  if (row.type !== 'outbound') throw cannotForward('Inbound emails cannot be forwarded.');
  const content = await loadContent(ctx.db, row.content_id);
  if (!content.message) throw cannotForward('The content of this email was purged after the retention period; it cannot be forwarded.');
  const original = content.message;
  const bodies = input.includeHeaders ? wrapForwarded(row, original, input) : { html: original.html, text: original.text };
  const subject = input.subject ?? (input.includeHeaders ? `Fwd: ${original.subject}` : original.subject);
  const message: StoredMessage = {
    from: input.from?.parsed ?? original.from,
    to: input.to,
    cc: [],
    bcc: [],
    reply_to: original.reply_to,
    subject: subject.replace(/[\r\n]+/g, ' '),
    html: bodies.html,
    text: bodies.text,
    // Resent unchanged keeps the original's own headers; a forwarded message is a new one.
    headers: input.includeHeaders ? {} : original.headers,
    attachments: original.attachments.filter((a) => hasAllowedExtension(a.filename)),
  };
  return {
    message,
    fromHeader: input.from?.header ?? row.from,
    meta: null,
    scheduledAt: null,
    tracking: undefined,
    source: 'forward',
    originalId: row.id,
  };
}

export async function forwardEmail(
  ctx: AppContext,
  principal: Principal,
  id: string,
  idempotencyHeader: string | string[] | undefined,
  body: unknown,
): Promise<SendOutcome> {
  const limit = await checkForwardLimit(ctx.db, principal.workspaceId);
  if (!limit.ok) {
    // Every forward response carries the sending limits' ratelimit-* headers, a refusal too.
    const workspace = await getWorkspace(ctx.db, principal.workspaceId);
    const sending = workspace ? await checkSendLimits(ctx.db, workspace) : null;
    throw new ApiError(limit.status, limit.body, { ...(sending ? rateLimitHeaders(sending.state) : {}), ...limit.headers });
  }
  let built = false;
  const outcome = await acceptIdempotently(
    ctx,
    principal,
    idempotencyHeader,
    async () => {
      const request = await buildForward(ctx, principal, id, body);
      built = true;
      return { ...request, inTransaction: (tx) => countForward(tx, principal.workspaceId) };
    },
    (rows, request) => ({
      ...sendResponseFor(rows, request),
      original_id: id,
      message: `Email ${id} was forwarded to ${request.message.to.map((a) => a.address).join(', ')}.`,
    }),
  );
  // A replay sends nothing but still counts against the hourly forward limit (spec).
  if (!built) await countForward(ctx.db, principal.workspaceId);
  return outcome;
}
