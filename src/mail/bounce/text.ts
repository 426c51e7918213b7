// Reading the parts of a report: header-style fields, addresses, codes, the returned message's
// headers, and the report's text when its MIME structure is broken.
import type { AddressObject, ParsedMail } from 'mailparser';
import { reporterReason, type ReportHeaders } from './reporters.ts';

export const STATUS_CODE = /(?<![\w.])([245])\.(\d{1,3})\.(\d{1,3})(?![\w]|\.\d)/;
export const SMTP_REPLY = /(?<![\w.])([45]\d\d)[ -](?=\S)/;
// Bounded quantifiers (RFC 5321 lengths) keep the scan linear on hostile input.
export const ADDRESS =
  /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,10}[A-Za-z][A-Za-z0-9-]{0,62}/;
// Bounce explanations sit at the top; the returned copy after them can be large.
export const HEURISTIC_TEXT_LIMIT = 64 * 1024;

/** Header-style fields (RFC 822 syntax: folded lines) split into blocks at blank lines. */
export function parseFieldBlocks(text: string): Array<Map<string, string>> {
  const blocks: Array<Map<string, string>> = [];
  let current = new Map<string, string>();
  let lastKey: string | null = null;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (line.trim() === '') {
      if (current.size) blocks.push(current);
      current = new Map();
      lastKey = null;
      continue;
    }
    if (/^[ \t]/.test(line) && lastKey) {
      current.set(lastKey, `${current.get(lastKey)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    lastKey = line.slice(0, colon).trim().toLowerCase();
    // The first occurrence wins (Received-like repeats do not matter here).
    if (!current.has(lastKey)) current.set(lastKey, line.slice(colon + 1).trim());
  }
  if (current.size) blocks.push(current);
  return blocks;
}

/** `rfc822; <Bob@Example.com>` → `bob@example.com`. */
export function addressField(value: string | undefined): string | null {
  if (!value) return null;
  const match = ADDRESS.exec(value.includes(';') ? value.slice(value.indexOf(';') + 1) : value);
  return match ? match[0].toLowerCase() : null;
}

/** The report's own headers, raw (From with its display name, Received lines). */
export function reportHeaders(mail: ParsedMail): ReportHeaders {
  const values = new Map<string, string>();
  const received: string[] = [];
  for (const { key, line } of mail.headerLines) {
    const value = line
      .slice(line.indexOf(':') + 1)
      .replace(/\r?\n[ \t]+/g, ' ')
      .trim();
    if (key === 'received') received.push(value);
    else if (!values.has(key)) values.set(key, value);
  }
  return { get: (name) => values.get(name) ?? '', received };
}

/** OpenSMTPD-style "addr: what happened" lines: what is said about one recipient. */
export function recipientLine(text: string, recipient: string): string | null {
  const escaped = recipient.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const line = new RegExp(`^\\s*<?${escaped}>?:\\s*(\\S.*)$`, 'im').exec(text);
  return line ? line[1].trim() : null;
}

/** ".example.com" for an address, so that receiver tables match the recipient's domain like a host suffix. */
export function domainOf(address: string | null): string {
  return address ? `.${address.slice(address.lastIndexOf('@') + 1)}` : '';
}

/** The receiving host a report names ("host mx.example.com[192.0.2.1] said:", "mx.example.com [192.0.2.1]"). */
export function remoteHostIn(text: string): string | null {
  return /\b((?:[a-z0-9-]{1,63}\.){1,10}[a-z]{2,63})\.?\s*\[(?:\d{1,3}\.){3}\d{1,3}\]/i.exec(text.slice(0, 8000))?.[1] ?? null;
}

export function statusIn(text: string | null | undefined): string | null {
  const match = STATUS_CODE.exec(text ?? '');
  return match ? `${match[1]}.${match[2]}.${match[3]}` : null;
}

export function messageIdIn(headersText: string): string | null {
  const match = /^message-id:[ \t]*(?:\r?\n[ \t]+)?(<[^>\s]+>|[^\s<>]+@[^\s<>]+)/im.exec(headersText);
  if (!match) return null;
  return match[1].startsWith('<') ? match[1] : `<${match[1]}>`;
}

/** An address field's address as written: a VERP sender's local part keeps its case (RFC 5321 §2.4). */
export function senderField(value: string | undefined): string | null {
  if (!value) return null;
  return ADDRESS.exec(value.includes(';') ? value.slice(value.indexOf(';') + 1) : value)?.[0] ?? null;
}

/** The envelope sender a returned message's headers name (Return-Path), as written. */
export function returnPathIn(headersText: string | null): string | null {
  return headersText ? senderField(parseFieldBlocks(headersText)[0]?.get('return-path')) : null;
}

export function firstAddress(value: AddressObject | AddressObject[] | undefined): string | null {
  const list = Array.isArray(value) ? value : value ? [value] : [];
  for (const group of list) for (const entry of group.value) if (entry.address) return entry.address.toLowerCase();
  return null;
}

const ORIGINAL_PART = /^(message\/(rfc822|global)|text\/rfc822-headers|message\/global-headers)$/i;

/**
 * The returned message's headers: its message/rfc822 or text/rfc822-headers part. mailparser
 * hands an attached message over as an attachment but folds an inline one into the text, so
 * the raw part is read as a fallback (these parts are 7bit/8bit by RFC 6522).
 */
export function originalHeaders(mail: ParsedMail, rawText: string): string | null {
  const part = mail.attachments.find((a) => ORIGINAL_PART.test(a.contentType));
  let text: string | null = part ? part.content.toString('utf8') : null;
  if (text === null) {
    const header = /^content-type:[ \t]*(message\/(rfc822|global)|text\/rfc822-headers|message\/global-headers)\b.*$/im.exec(rawText);
    if (!header) return null;
    // Skip the part's own MIME headers up to the blank line, then read the original's.
    const afterPartHeaders = rawText.slice(header.index).search(/\r?\n\r?\n/);
    if (afterPartHeaders < 0) return null;
    text = rawText.slice(header.index + afterPartHeaders).replace(/^\s+/, '');
  }
  const end = text.search(/\r?\n\r?\n/);
  return end >= 0 ? text.slice(0, end) : text;
}

/** The report's text; a multipart whose boundary does not match its parts leaves mailparser with none: the raw body then. */
export function bodyTextOf(mail: ParsedMail, rawText: string): string {
  if ((mail.text ?? '').trim().length > 40) return mail.text ?? '';
  return rawText.slice(Math.max(0, rawText.search(/\r?\n\r?\n/))).replace(/^--\S+$/gm, '');
}

/** The body of a MIME part found by its Content-Type line in the raw text, up to the next boundary line. */
export function rawPart(rawText: string, contentType: RegExp): string | null {
  const header = contentType.exec(rawText);
  if (!header) return null;
  const afterHeaders = rawText.slice(header.index).search(/\r?\n\r?\n/);
  if (afterHeaders < 0) return null;
  const body = rawText.slice(header.index + afterHeaders).replace(/^\s+/, '');
  const end = body.search(/^--\S/m);
  return end >= 0 ? body.slice(0, end) : body;
}

/** The line holding `index` (from `index` itself when `fromIndex`), with its wrapped continuation. */
export function lineAround(text: string, index: number, fromIndex = false): string {
  const start = fromIndex ? index : text.lastIndexOf('\n', index) + 1;
  let end = text.indexOf('\n', index);
  if (end < 0) end = text.length;
  let line = text.slice(start, end).trim();
  // Wrapped continuation lines (Exim's "    host …: 550 …\n    more text").
  const rest = text.slice(end + 1).split('\n');
  for (const next of rest) {
    if (!/^\s{2,}\S/.test(next) || line.length > 400) break;
    line += ` ${next.trim()}`;
  }
  return line.replace(/\s+/g, ' ');
}

/** The part of a non-standard bounce before the returned copy of the message. */
export function explanationOf(text: string): { explanation: string; copy: string } {
  const markers =
    /this is a copy of the message|below this line is a copy|original message (follows|headers)|returned message follows|--- ?original message|message headers follow|unsent message below|header of the original message|below is a copy of the original|returned message --/gi;
  // The first marker with an explanation before it ("The original message was received at…"
  // opens sendmail's bounces, it does not end them).
  for (const marker of text.matchAll(markers)) {
    const lineStart = text.lastIndexOf('\n', marker.index) + 1;
    if (text.slice(0, lineStart).replace(/\s+/g, '').length < 40) continue;
    return { explanation: text.slice(0, lineStart), copy: text.slice(lineStart) };
  }
  return { explanation: text, copy: '' };
}

/** The reporting product's reading of the diagnostic, else of the explanation around it. */
export function reporterOf(mail: ParsedMail, diagnostic: string | null, context: string, status: string | null = null): string | null {
  return reporterReason(reportHeaders(mail), diagnostic, context, status);
}
