// Raw MIME (as an SMTP client or a remote MX sent it) to the StoredMessage every other part of
// Postlane reads: parsed with mailparser, addresses normalized like the API's, attachments as
// base64, headers as a name → value record.
import type { AddressObject, ParsedMail } from 'mailparser';
import { simpleParser } from '../mail/parse-mail.ts';
import { detectExtension } from 'nodemailer/lib/mime-funcs';
import { isEmailAddress, type ParsedAddress } from '../resources/emails/addresses.ts';
import type { StoredAttachment } from '../resources/emails/attachments.ts';
import type { StoredMessage } from '../resources/emails/content.ts';
import { smtpError } from './replies.ts';

export async function parseMime(raw: Buffer): Promise<ParsedMail> {
  try {
    // keepCidLinks: inline images stay `cid:` references to their parts (as API sends store
    // them); no text is invented from html, no html from text.
    return await simpleParser(raw, {
      keepCidLinks: true,
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
    });
  } catch {
    // Retrying cannot fix a message that cannot be read: a permanent refusal.
    throw smtpError(554, '5.6.0 The message could not be parsed');
  }
}

/** `Local@Example.COM` → `Local@example.com` (the API's form: the domain is case-insensitive). */
export function normalizeAddress(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? address : `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
}

/** The valid addresses of an address header (groups flattened), normalized. */
export function addressesOf(field: AddressObject | AddressObject[] | undefined): ParsedAddress[] {
  const out: ParsedAddress[] = [];
  const visit = (entries: AddressObject['value']) => {
    for (const entry of entries) {
      if (entry.group) visit(entry.group);
      else if (entry.address && isEmailAddress(entry.address.trim()))
        out.push({ address: normalizeAddress(entry.address.trim()), name: entry.name ?? '' });
    }
  };
  for (const object of Array.isArray(field) ? field : field ? [field] : []) visit(object.value);
  return out;
}

/** The header fields as a record (first occurrence wins: the topmost, i.e. the newest). */
export function headerRecord(parsed: ParsedMail, keep: (lowerName: string) => boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const { key, line } of parsed.headerLines) {
    const colon = line.indexOf(':');
    if (colon <= 0 || seen.has(key) || !keep(key)) continue;
    seen.add(key);
    headers[line.slice(0, colon).trim()] = line
      .slice(colon + 1)
      .replace(/\r?\n[ \t]+/g, ' ')
      .trim();
  }
  return headers;
}

/** Attachments as stored; unnamed parts get a name from their type. Inline (related) parts
 *  keep their Content-ID without brackets, which the html references as `cid:`. */
export function storedAttachments(parsed: ParsedMail): StoredAttachment[] {
  return parsed.attachments.map((attachment, i) => {
    const contentType = (attachment.contentType || 'application/octet-stream').toLowerCase();
    const cid = attachment.contentId ? attachment.contentId.trim().replace(/^<|>$/g, '') : null;
    return {
      filename: attachment.filename?.trim() || `attachment-${i + 1}.${detectExtension(contentType) || 'bin'}`,
      content_type: contentType,
      content_id: cid && (attachment.related || attachment.contentDisposition === 'inline') ? cid : null,
      content: attachment.content.toString('base64'),
      size: attachment.content.length,
    };
  });
}

/** html and text as the API stores them: null when absent. */
export function bodiesOf(parsed: ParsedMail): { html: string | null; text: string | null } {
  const html = typeof parsed.html === 'string' && parsed.html !== '' ? parsed.html : null;
  // Every line of a MIME body ends with a line break, so the last one is transport, not text.
  const parsedText = typeof parsed.text === 'string' ? parsed.text.replace(/\r?\n$/, '') : undefined;
  const text = parsedText !== undefined && (parsedText !== '' || html === null) ? parsedText : null;
  return { html, text: html === null && text === null ? '' : text };
}

export function oneLine(value: string | undefined): string {
  return (value ?? '').replace(/[\r\n]+\s*/g, ' ').trim();
}

// Headers that describe transport, structure or identity: Postlane writes its own when it
// composes the message again, exactly as for an API send.
const SUBMISSION_DROPPED = new Set([
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
  'return-path',
  'received',
  'x-received',
  'delivered-to',
  'x-original-to',
  'dkim-signature',
  'domainkey-signature',
  'authentication-results',
  'received-spf',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
]);

export interface SubmissionParts {
  message: StoredMessage;
  fromHeader: string;
}

/**
 * A submitted message as the send pipeline takes it. The envelope (RCPT TO) says who receives
 * it; the To and Cc headers say as what (to, cc), and an envelope recipient in neither is a
 * bcc, as with any relay. Null when the From header has no usable address.
 */
export function submissionMessage(parsed: ParsedMail, envelopeRecipients: string[]): SubmissionParts | null {
  const from = addressesOf(parsed.from)[0];
  if (!from) return null;
  const named = new Map<string, { kind: 'to' | 'cc'; name: string }>();
  for (const [kind, field] of [
    ['cc', parsed.cc],
    ['to', parsed.to],
  ] as const) {
    for (const entry of addressesOf(field)) named.set(entry.address.toLowerCase(), { kind, name: entry.name });
  }
  const to: ParsedAddress[] = [];
  const cc: ParsedAddress[] = [];
  const bcc: ParsedAddress[] = [];
  for (const recipient of envelopeRecipients) {
    const address = normalizeAddress(recipient);
    const header = named.get(address.toLowerCase());
    (header?.kind === 'to' ? to : header?.kind === 'cc' ? cc : bcc).push({ address, name: header?.name ?? '' });
  }
  const { html, text } = bodiesOf(parsed);
  return {
    message: {
      from,
      to,
      cc,
      bcc,
      reply_to: addressesOf(parsed.replyTo),
      subject: oneLine(parsed.subject),
      html,
      text,
      headers: headerRecord(parsed, (name) => !SUBMISSION_DROPPED.has(name) && !name.startsWith('content-')),
      attachments: storedAttachments(parsed),
    },
    fromHeader: from.name ? `${from.name} <${from.address}>` : from.address,
  };
}

/** A received message as stored: every header as received (ours on top), bodies, attachments. */
export function inboundMessage(parsed: ParsedMail, fallbackFrom: string | null): StoredMessage {
  const from = addressesOf(parsed.from)[0] ?? { address: fallbackFrom ?? '', name: '' };
  const { html, text } = bodiesOf(parsed);
  return {
    from,
    to: addressesOf(parsed.to),
    cc: addressesOf(parsed.cc),
    bcc: [],
    reply_to: addressesOf(parsed.replyTo),
    subject: oneLine(parsed.subject),
    html,
    text,
    headers: headerRecord(parsed, (name) => name !== 'mime-version' && !name.startsWith('content-')),
    attachments: storedAttachments(parsed),
  };
}
