// Reading one email (https://emailit.com/docs/email-api.md): finding it in the caller's workspace,
// its stored content (null once purged by the retention job), and the shapes of GET /emails/{id}
// and its /raw, /body, /meta and /attachments variants.
import type { Selectable } from 'kysely';
import type { Executor } from '../../platform/db/database.ts';
import { messageError } from '../../platform/http/errors.ts';
import { composeMessage } from '../../mail/compose.ts';
import { BOUNCE_REASONS } from '../../mail/bounce-reasons.ts';
import { formatAddress } from './addresses.ts';
import type { StoredMessage } from './content.ts';
import { parseMeta, type EmailRow } from './objects.ts';
import type { EmailAttemptsTable } from './tables.ts';

export const emailNotFound = (id: string) => messageError(404, 'Email not found', `No email with id ${id} exists in this workspace.`);

/** The caller's email `id`, or the 404 every email endpoint answers. */
export async function findEmail(db: Executor, workspaceId: string, id: string): Promise<EmailRow> {
  const row = await db.selectFrom('emails').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!row) throw emailNotFound(id);
  return row;
}

export interface LoadedContent {
  /** Null once purged: only the addresses and subject are kept then. */
  message: StoredMessage | null;
  raw: string | null;
  purgedAt: string | null;
  createdAt: string;
}

export async function loadContent(db: Executor, contentId: string): Promise<LoadedContent> {
  const row = await db
    .selectFrom('email_contents')
    .select(['message', 'raw', 'purged_at', 'created_at'])
    .where('id', '=', contentId)
    .executeTakeFirstOrThrow();
  return {
    message: row.purged_at ? null : (JSON.parse(row.message) as StoredMessage),
    raw: row.purged_at ? null : row.raw,
    purgedAt: row.purged_at,
    createdAt: row.created_at,
  };
}

/** The fields every read shares: what the email row knows, content aside. */
export function emailMetadata(row: EmailRow) {
  return {
    object: 'email' as const,
    id: row.id,
    type: row.type,
    token: row.token,
    message_id: row.message_id,
    from: row.from,
    to: row.to,
    subject: row.subject,
    status: row.status,
    scheduled_at: row.scheduled_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    delivered_at: row.delivered_at,
    size: Number(row.size),
    tracking: { loads: row.track_loads === 1, clicks: row.track_clicks === 1 },
    meta: parseMeta(row.meta),
    original_id: row.original_id,
  };
}

export type HeaderMap = Record<string, string | string[]>;

/** The header block of a raw message, unfolded; repeated headers become arrays. */
export function parseHeaderBlock(raw: string): HeaderMap {
  const end = raw.search(/\r?\n\r?\n/);
  const block = end === -1 ? raw : raw.slice(0, end);
  const headers: HeaderMap = {};
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    const existing = headers[name];
    headers[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return headers;
}

/** RFC 5322 date text of an ISO timestamp. */
export function mailDate(iso: string): string {
  return new Date(iso).toUTCString().replace('GMT', '+0000');
}

/** The message's headers: as received for SMTP and inbound mail, else the ones we compose. */
function headersOf(row: EmailRow, content: LoadedContent): HeaderMap | null {
  if (content.raw) return parseHeaderBlock(content.raw);
  const message = content.message;
  if (!message) return null;
  const headers: HeaderMap = { From: row.from };
  if (message.to.length) headers.To = message.to.map(formatAddress).join(', ');
  if (message.cc.length) headers.Cc = message.cc.map(formatAddress).join(', ');
  if (message.reply_to.length) headers['Reply-To'] = message.reply_to.map(formatAddress).join(', ');
  headers.Subject = message.subject;
  headers['Message-ID'] = row.message_id;
  headers.Date = mailDate(row.created_at);
  return { ...message.headers, ...headers };
}

function attachmentInfo(message: StoredMessage | null) {
  return message
    ? message.attachments.map((a) => ({ filename: a.filename, content_type: a.content_type, content_id: a.content_id, size: a.size }))
    : null;
}

type AttemptRow = Selectable<EmailAttemptsTable>;

function attemptObject(row: AttemptRow) {
  return {
    attempted_at: row.attempted_at,
    outcome: row.outcome,
    mx_host: row.mx_host,
    smtp_code: row.smtp_code === null ? null : Number(row.smtp_code),
    enhanced_code: row.enhanced_code,
    response: row.response,
    reason: row.reason,
    tls: row.tls,
    source_address: row.source_address ?? null,
  };
}

/** The documented reason of the email's last rejection or bounce (docs/delivery.md), or null. */
export function bounceObject(row: EmailRow) {
  if (!row.bounce_reason) return null;
  const known = (BOUNCE_REASONS as Record<string, { description: string }>)[row.bounce_reason];
  return { reason: row.bounce_reason, type: row.bounce_type ?? 'soft', description: known?.description ?? null };
}

/** GET /emails/{id}: the email with headers, bodies, attachment info and delivery attempts. */
export async function retrievedEmail(db: Executor, row: EmailRow) {
  const [content, attempts] = await Promise.all([
    loadContent(db, row.content_id),
    db.selectFrom('email_attempts').selectAll().where('email_id', '=', row.id).orderBy('attempted_at').orderBy('id').execute(),
  ]);
  const { message } = content;
  const meta = emailMetadata(row);
  return {
    object: meta.object,
    id: meta.id,
    type: meta.type,
    token: meta.token,
    message_id: meta.message_id,
    from: meta.from,
    to: meta.to,
    cc: message ? message.cc.map((a) => a.address) : null,
    reply_to: message ? message.reply_to.map((a) => a.address) : null,
    subject: meta.subject,
    status: meta.status,
    scheduled_at: meta.scheduled_at,
    created_at: meta.created_at,
    updated_at: meta.updated_at,
    delivered_at: meta.delivered_at,
    bounce: bounceObject(row),
    tracking: meta.tracking,
    meta: meta.meta,
    headers: headersOf(row, content),
    html: message?.html ?? null,
    text: message?.text ?? null,
    attachments: attachmentInfo(message),
    size: meta.size,
    original_id: meta.original_id,
    purged_at: content.purgedAt,
    attempts: attempts.map(attemptObject),
  };
}

/** GET /emails/{id}/meta: metadata, headers and attachment info, no bodies or content. */
export async function emailMeta(db: Executor, row: EmailRow) {
  const content = await loadContent(db, row.content_id);
  return {
    ...emailMetadata(row),
    cc: content.message ? content.message.cc.map((a) => a.address) : null,
    reply_to: content.message ? content.message.reply_to.map((a) => a.address) : null,
    headers: headersOf(row, content),
    attachments: attachmentInfo(content.message),
    purged_at: content.purgedAt,
  };
}

/** GET /emails/{id}/body: only the parsed bodies. */
export async function emailBody(db: Executor, row: EmailRow) {
  const { message } = await loadContent(db, row.content_id);
  return { text: message?.text ?? null, html: message?.html ?? null };
}

/** GET /emails/{id}/attachments: the attachments with base64 content. */
export async function emailAttachments(db: Executor, row: EmailRow) {
  const { message } = await loadContent(db, row.content_id);
  return {
    data: message
      ? message.attachments.map((a) => ({
          filename: a.filename,
          content_type: a.content_type,
          content_id: a.content_id,
          size: a.size,
          content: a.content,
        }))
      : null,
  };
}

/** The raw MIME of a stored message composed again, with the email's own Message-ID. */
export async function composeStored(row: EmailRow, message: StoredMessage): Promise<string> {
  const raw = await composeMessage({
    from: row.from,
    to: message.to.map(formatAddress),
    cc: message.cc.map(formatAddress),
    replyTo: message.reply_to.map(formatAddress),
    subject: message.subject,
    html: message.html,
    text: message.text,
    headers: message.headers,
    attachments: message.attachments.map((a) => ({
      filename: a.filename,
      content: Buffer.from(a.content, 'base64'),
      contentType: a.content_type,
      contentId: a.content_id,
    })),
    messageId: row.message_id,
    date: new Date(row.created_at),
  });
  return raw.toString('utf8');
}

/** GET /emails/{id}/raw: the raw MIME (as received, or composed from the stored content). */
export async function emailRaw(db: Executor, row: EmailRow) {
  const content = await loadContent(db, row.content_id);
  const raw = content.raw ?? (content.message ? await composeStored(row, content.message) : null);
  return { ...emailMetadata(row), raw, purged_at: content.purgedAt };
}
