// The MIME message of one email, built with nodemailer's MailComposer: html + text become
// multipart/alternative, attachments with a content id become inline parts beside the html
// (multipart/related), others multipart/mixed. The Message-ID is always ours; there is never a
// Bcc header (bcc recipients only appear in the SMTP envelope).
import { createHash, randomBytes } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';

export interface ComposeAttachment {
  filename: string;
  content: Buffer;
  /** MIME type; guessed from the filename when absent. */
  contentType?: string | null;
  /** Makes the part inline, referenced from the html as `cid:<contentId>`. */
  contentId?: string | null;
}

export interface ListUnsubscribe {
  /** https URL; with `oneClick`, also List-Unsubscribe-Post (RFC 8058). */
  url?: string | null;
  mailto?: string | null;
  oneClick?: boolean;
}

export interface ComposeInput {
  /** `addr` or `Name <addr>`. */
  from: string;
  to?: string[];
  cc?: string[];
  replyTo?: string | string[] | null;
  subject: string;
  html?: string | null;
  text?: string | null;
  attachments?: ComposeAttachment[];
  /** Extra headers from the request; structural ones (Message-ID, From, Bcc, Content-Type…) are ignored. */
  headers?: Record<string, string | number | boolean | null | undefined>;
  /** `<token@domain>`, angle brackets optional. */
  messageId: string;
  date?: Date;
  listUnsubscribe?: ListUnsubscribe | null;
}

// Headers the service sets itself or that would corrupt the MIME structure or the envelope.
const RESERVED_HEADERS = new Set([
  'message-id', 'from', 'to', 'cc', 'bcc', 'subject', 'reply-to', 'date', 'sender',
  'mime-version', 'content-type', 'content-transfer-encoding', 'content-disposition',
  'return-path', 'dkim-signature', 'received',
]);
// RFC 5322 field-name: printable ASCII except ":".
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/** The request's custom headers that may go into the message, with line breaks removed. */
export function customHeaders(headers: ComposeInput['headers'] = {}, extraReserved: string[] = []): Array<{ key: string; value: string }> {
  const reserved = new Set([...RESERVED_HEADERS, ...extraReserved.map((name) => name.toLowerCase())]);
  const result: Array<{ key: string; value: string }> = [];
  for (const [key, raw] of Object.entries(headers ?? {})) {
    const name = key.trim();
    if (raw === null || raw === undefined || !FIELD_NAME.test(name) || reserved.has(name.toLowerCase())) continue;
    // A CR or LF in a value would start a new header (header injection): fold it to a space.
    result.push({ key: name, value: String(raw).replace(/[\r\n]+\s*/g, ' ').trim() });
  }
  return result;
}

function listUnsubscribeHeaders(list: ListUnsubscribe): Array<{ key: string; value: string }> {
  const targets = [list.url, list.mailto ? (list.mailto.startsWith('mailto:') ? list.mailto : `mailto:${list.mailto}`) : null]
    .filter((value): value is string => Boolean(value))
    .map((value) => `<${value.replace(/[\r\n<>]/g, '')}>`);
  if (targets.length === 0) return [];
  const headers = [{ key: 'List-Unsubscribe', value: targets.join(', ') }];
  if (list.oneClick && list.url?.startsWith('https://')) headers.push({ key: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' });
  return headers;
}

export function bracketMessageId(messageId: string): string {
  const bare = messageId.trim().replace(/^<|>$/g, '');
  if (!/^[^\s<>@]+@[^\s<>@]+$/.test(bare)) throw new Error(`Message-ID must look like <token@domain>, got "${messageId}"`);
  return `<${bare}>`;
}

/** The raw RFC 5322 message (CRLF line endings), ready to sign and send. */
export async function composeMessage(input: ComposeInput): Promise<Buffer> {
  const unsubscribe = input.listUnsubscribe ? listUnsubscribeHeaders(input.listUnsubscribe) : [];
  const headers = [
    ...customHeaders(input.headers, unsubscribe.length ? ['list-unsubscribe', 'list-unsubscribe-post'] : []),
    ...unsubscribe,
  ];
  const hasBody = Boolean(input.html) || Boolean(input.text);
  const bodyKey = input.attachments?.length ? null : bodyKeyOf(input.html ?? null, input.text ?? null);
  const composer = new MailComposer({
    from: input.from,
    to: input.to?.length ? input.to : undefined,
    cc: input.cc?.length ? input.cc : undefined,
    replyTo: input.replyTo && input.replyTo.length ? input.replyTo : undefined,
    subject: input.subject,
    messageId: bracketMessageId(input.messageId),
    date: input.date ?? new Date(),
    text: input.text || (hasBody ? undefined : ''),
    html: input.html || undefined,
    attachments: (input.attachments ?? []).map((attachment) => ({
      filename: attachment.filename,
      content: attachment.content,
      contentType: attachment.contentType || undefined,
      ...(attachment.contentId
        ? { cid: attachment.contentId.replace(/^<|>$/g, ''), contentDisposition: 'inline' }
        : {}),
    })),
    // Boundaries follow from the body, so the same body encodes to the same bytes (cached below).
    ...(bodyKey ? { baseBoundary: bodyKey } : {}),
    // Everything is given as content: never read a path or URL named in the request.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const message = composer.compile();
  // Added after compile so they follow From/To/Subject/Message-ID/Date instead of leading.
  for (const header of headers) message.addHeader(header.key, header.value);
  const body = bodyKey ? encodedBodies.get(bodyKey) : undefined;
  // A body encoded before: only this copy's headers are built (what build() writes first).
  if (body) return Buffer.concat([toCrlf(Buffer.from(`${message.buildHeaders()}\r\n\r\n`)), body]);
  const raw = toCrlf(await message.build());
  if (bodyKey) rememberBody(bodyKey, raw);
  return raw;
}

// Encoded bodies (MIME parts, transfer-encoded) by their html and text: all recipients of a send,
// and the many sends of one template, share one, so its encoding (a good half of composing) is
// done once. Without attachments only, small ones only, a few of them.
const encodedBodies = new Map<string, Buffer>();
const MAX_BODIES = 32;
const MAX_BODY_BYTES = 256 * 1024;
// Per process, so boundaries are not predictable from the content alone.
const boundarySalt = randomBytes(16);

/** Empties the cache of encoded bodies (tests compare a cached composition with a fresh one). */
export function forgetEncodedBodies(): void {
  encodedBodies.clear();
}

function bodyKeyOf(html: string | null, text: string | null): string | null {
  if ((html?.length ?? 0) + (text?.length ?? 0) > MAX_BODY_BYTES) return null;
  const hash = createHash('sha256').update(boundarySalt);
  hash.update(html === null ? 'n' : `h${html.length}:`).update(html ?? '');
  hash.update(text === null ? 'n' : `t${text.length}:`).update(text ?? '');
  return hash.digest('hex').slice(0, 32);
}

function rememberBody(key: string, raw: Buffer): void {
  const split = raw.indexOf('\r\n\r\n');
  if (split === -1) return;
  if (encodedBodies.size >= MAX_BODIES) encodedBodies.delete(encodedBodies.keys().next().value!);
  encodedBodies.set(key, Buffer.from(raw.subarray(split + 4)));
}

/**
 * Every line ending as CRLF, as SMTP sends it, so the DKIM signature covers the bytes that go
 * out. (Cheaper than nodemailer's `newline: 'win'` stream, which costs a third of the build.)
 */
function toCrlf(raw: Buffer): Buffer {
  const text = raw.toString('latin1');
  if (!/\r(?!\n)|(?<!\r)\n/.test(text)) return raw;
  return Buffer.from(text.replace(/\r\n|\r|\n/g, '\r\n'), 'latin1');
}
