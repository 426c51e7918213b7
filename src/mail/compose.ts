// The MIME message of one email: html + text become multipart/alternative, attachments with a
// content id become inline parts beside the html (multipart/related), others multipart/mixed
// (nodemailer's MailComposer builds those; the rest is written directly, see below). The
// Message-ID is always ours; there is never a Bcc header (bcc recipients only appear in the
// SMTP envelope).
import { createHash, randomBytes } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import MimeNode from 'nodemailer/lib/mime-node';
import { foldLines, hasLongerLines, isPlainText } from 'nodemailer/lib/mime-funcs';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';

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
  'message-id',
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'reply-to',
  'date',
  'sender',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'return-path',
  'dkim-signature',
  'received',
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
    result.push({
      key: name,
      value: String(raw)
        .replace(/[\r\n]+\s*/g, ' ')
        .trim(),
    });
  }
  return result;
}

function listUnsubscribeHeaders(list: ListUnsubscribe): Array<{ key: string; value: string }> {
  const targets = [list.url, list.mailto ? (list.mailto.startsWith('mailto:') ? list.mailto : `mailto:${list.mailto}`) : null]
    .filter((value): value is string => Boolean(value))
    .map((value) => `<${value.replace(/[\r\n<>]/g, '')}>`);
  if (targets.length === 0) return [];
  const headers = [{ key: 'List-Unsubscribe', value: targets.join(', ') }];
  if (list.oneClick && list.url?.startsWith('https://'))
    headers.push({ key: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' });
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
  if (input.attachments?.length) return composeWithAttachments(input, headers);
  const body = encodedBody(input.html || null, input.text || null);
  // CRLF throughout already: header values never hold a line break, the parts were converted.
  return Buffer.from(`${leadingHeaders(input, headers)}\r\n${body.headers}\r\n\r\n${body.content}`);
}

/** A message with attachments: nodemailer's MailComposer builds the tree of parts. */
async function composeWithAttachments(input: ComposeInput, headers: Array<{ key: string; value: string }>): Promise<Buffer> {
  const hasBody = Boolean(input.html) || Boolean(input.text);
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
      ...(attachment.contentId ? { cid: attachment.contentId.replace(/^<|>$/g, ''), contentDisposition: 'inline' } : {}),
    })),
    // Everything is given as content: never read a path or URL named in the request.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const message = composer.compile();
  // Added after compile so they follow From/To/Subject/Message-ID/Date instead of leading.
  for (const header of headers) message.addHeader(header.key, header.value);
  return toCrlf(await message.build());
}

// Without attachments (nearly every message) the message is written directly, in MailComposer's
// layout (the same headers in the same order, one text/plain and/or one text/html part), with
// nodemailer's own encoders for every header value and body. MailComposer builds a tree of
// stream nodes for each message: 640 us of CPU for the deliver bench's message, more than its
// RSA signature, against 120 us here (50 us when its body is cached).
const headerEncoder = new MimeNode();
// MimeNode's own spelling of a header name (x-campaign-id -> X-Campaign-ID), as it wrote custom
// headers before; internal to nodemailer (pinned), checked against MailComposer by the tests.
const headerName = (key: string): string =>
  (headerEncoder as unknown as { _normalizeHeaderKey(key: string): string })._normalizeHeaderKey(key);

/** From … Date, then the request's own headers, each encoded and folded as MailComposer does. */
function leadingHeaders(input: ComposeInput, custom: Array<{ key: string; value: string }>): string {
  const lines: string[] = [];
  const add = (key: string, value: string | string[]) => {
    const encoded = headerEncoder.encodeHeaderValue(key, value);
    if (encoded.trim()) lines.push(foldLines(`${headerName(key)}: ${encoded}`, 76));
  };
  add('From', input.from);
  if (input.to?.length) add('To', input.to);
  if (input.cc?.length) add('Cc', input.cc);
  if (input.replyTo?.length) add('Reply-To', input.replyTo);
  add('Subject', input.subject);
  lines.push(`Message-ID: ${bracketMessageId(input.messageId)}`);
  lines.push(`Date: ${(input.date ?? new Date()).toUTCString().replace(/GMT/, '+0000')}`);
  for (const header of custom) add(header.key, header.value);
  return lines.join('\r\n');
}

interface EncodedBody {
  /** The structural headers that close the header block: MIME-Version and Content-Type. */
  headers: string;
  content: string;
}

/** MIME-Version, Content-Type and the encoded parts for this html and text (each non-empty or null). */
function encodedBody(html: string | null, text: string | null): EncodedBody {
  const key = bodyKeyOf(html, text);
  const cached = key ? encodedBodies.get(key) : undefined;
  if (cached) return cached;
  const parts = [
    ...(text !== null ? [textPart('text/plain; charset=utf-8', text)] : []),
    ...(html !== null ? [textPart('text/html; charset=utf-8', html)] : []),
  ];
  let body: EncodedBody;
  if (parts.length === 0) {
    body = { headers: 'MIME-Version: 1.0\r\nContent-Type: text/plain', content: '' };
  } else if (parts.length === 1) {
    const [part] = parts;
    const content = part.content.endsWith('\n') ? part.content : `${part.content}\r\n`;
    body = { headers: `Content-Transfer-Encoding: ${part.encoding}\r\nMIME-Version: 1.0\r\nContent-Type: ${part.type}`, content };
  } else {
    // Boundaries follow from the body (salted per process), so the same body encodes to the same bytes.
    const boundary = `--_PLP-${key ?? randomBytes(16).toString('hex')}-Part_1`;
    const content = parts
      .map(
        (part) => `--${boundary}\r\nContent-Type: ${part.type}\r\nContent-Transfer-Encoding: ${part.encoding}\r\n\r\n${part.content}\r\n`,
      )
      .join('');
    body = {
      headers: `MIME-Version: 1.0\r\n${foldLines(`Content-Type: multipart/alternative; boundary="${boundary}"`, 76)}`,
      content: `${content}--${boundary}--\r\n`,
    };
  }
  if (key) rememberBody(key, body);
  return body;
}

/** A text part's transfer encoding as MimeNode chooses it: 7bit when plain and short-lined, else
 *  quoted-printable for mostly Latin text and base64 for the rest. */
function textPart(type: string, value: string): { type: string; encoding: string; content: string } {
  if (isPlainText(value) && !hasLongerLines(value, 76)) return { type, encoding: '7bit', content: crlf(value) };
  if (mostlyLatin(value)) return { type, encoding: 'quoted-printable', content: crlf(qpWrap(qpEncode(value), 76)) };
  return {
    type,
    encoding: 'base64',
    content: Buffer.from(value)
      .toString('base64')
      .replace(/.{76}(?=.)/g, '$&\r\n'),
  };
}

/** More Latin letters than bytes outside printable ASCII (MimeNode's choice between Q and B). */
function mostlyLatin(value: string): boolean {
  let latin = 0;
  let other = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0x80 || code < 0x09 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f)) other++;
    else if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) latin++;
  }
  return other < latin;
}

// Encoded bodies by their html and text: all recipients of a send, and the many sends of one
// template, share one, so its encoding is done once. Small ones only, a few of them.
const encodedBodies = new Map<string, EncodedBody>();
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

function rememberBody(key: string, body: EncodedBody): void {
  if (encodedBodies.size >= MAX_BODIES) encodedBodies.delete(encodedBodies.keys().next().value!);
  encodedBodies.set(key, body);
}

const crlf = (text: string) => text.replace(/\r\n|\r|\n/g, '\r\n');

/**
 * Every line ending as CRLF, as SMTP sends it, so the DKIM signature covers the bytes that go
 * out. (Cheaper than nodemailer's `newline: 'win'` stream, which costs a third of the build.)
 */
function toCrlf(raw: Buffer): Buffer {
  const text = raw.toString('latin1');
  if (!/\r(?!\n)|(?<!\r)\n/.test(text)) return raw;
  return Buffer.from(crlf(text), 'latin1');
}
