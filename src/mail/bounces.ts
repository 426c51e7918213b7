// Reads mail that comes back to a VERP address: RFC 3464 delivery status notifications
// (multipart/report; report-type=delivery-status), ARF complaint reports (RFC 5965,
// report-type=feedback-report) and the non-standard bounces some servers still send (qmail,
// old Exim, appliances), recognized by their sender, subject, status codes and wording.
import type { AddressObject, ParsedMail } from 'mailparser';
import { simpleParser } from './parse-mail.ts';
import { classifyReason, isAutoReply, type BounceReason } from './bounce-reasons.ts';

export type BounceKind = 'bounce' | 'delay' | 'complaint' | 'auto_reply' | 'delivered' | 'unknown';

export interface RecipientStatus {
  recipient: string | null;
  /** failed | delayed | delivered | relayed | expanded (RFC 3464 Action). */
  action: string | null;
  status: string | null;
  diagnostic: string | null;
  /** The documented reason (bounce-reasons.ts). */
  reason: BounceReason;
  /** A permanent failure (5.x.x about the recipient's mailbox or the message). */
  hard: boolean;
}

export interface BounceReport {
  kind: BounceKind;
  /** The address that failed or complained (lowercase), when the report names it. */
  recipient: string | null;
  /** RFC 3463 enhanced status code, e.g. 5.1.1. */
  status: string | null;
  /** The remote server's words (Diagnostic-Code without its type, or the bounce text line). */
  diagnostic: string | null;
  /** Message-ID of the returned message, `<…>`. */
  originalMessageId: string | null;
  /** A bounce that will not go away by itself (status class 5); false for delays, 4.x.x expiries, unknowns. */
  hard: boolean;
  /** ARF Feedback-Type (abuse, fraud, virus, other, not-spam, auth-failure). */
  feedbackType: string | null;
  /** How the report was read. */
  source: 'dsn' | 'arf' | 'heuristic' | null;
  /** Every recipient block of a DSN. */
  recipients: RecipientStatus[];
  /** The documented reason of the primary recipient; null for mail that is no report. */
  reason: BounceReason | null;
}

const STATUS_CODE = /(?<![\w.])([245])\.(\d{1,3})\.(\d{1,3})(?![\w]|\.\d)/;
const SMTP_REPLY = /(?<![\w.])([45]\d\d)[ -](?=\S)/;
// Bounded quantifiers (RFC 5321 lengths) keep the scan linear on hostile input.
const ADDRESS = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,10}[A-Za-z][A-Za-z0-9-]{0,62}/;
// Bounce explanations sit at the top; the returned copy after them can be large.
const HEURISTIC_TEXT_LIMIT = 64 * 1024;
// ARF types that mean "this recipient does not want this mail" (RFC 5965 §7.3).
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

function empty(kind: BounceKind = 'unknown'): BounceReport {
  return { kind, recipient: null, status: null, diagnostic: null, originalMessageId: null, hard: false, feedbackType: null, source: null, recipients: [], reason: null };
}

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
function addressField(value: string | undefined): string | null {
  if (!value) return null;
  const match = ADDRESS.exec(value.includes(';') ? value.slice(value.indexOf(';') + 1) : value);
  return match ? match[0].toLowerCase() : null;
}

function statusIn(text: string | null | undefined): string | null {
  const match = STATUS_CODE.exec(text ?? '');
  return match ? `${match[1]}.${match[2]}.${match[3]}` : null;
}

function messageIdIn(headersText: string): string | null {
  const match = /^message-id:[ \t]*(?:\r?\n[ \t]+)?(<[^>\s]+>|[^\s<>]+@[^\s<>]+)/im.exec(headersText);
  if (!match) return null;
  return match[1].startsWith('<') ? match[1] : `<${match[1]}>`;
}

function firstAddress(value: AddressObject | AddressObject[] | undefined): string | null {
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

function readDsn(mail: ParsedMail, rawText: string, statusText: string): BounceReport {
  const context = explanationOf((mail.text ?? '').slice(0, HEURISTIC_TEXT_LIMIT)).explanation.slice(0, 4000);
  // The first block is per-message (Reporting-MTA…); some MTAs omit it, so blocks are picked by content.
  const recipients: RecipientStatus[] = parseFieldBlocks(statusText)
    .filter((block) => block.has('final-recipient') || block.has('original-recipient') || block.has('action'))
    .map((block) => {
      const diagnosticField = block.get('diagnostic-code') ?? null;
      const diagnostic = diagnosticField ? diagnosticField.replace(/^[\w-]+\s*;\s*/, '').trim() : null;
      let status = statusIn(block.get('status'));
      // "Status: 5.0.0" beside "550 5.1.1 …": the diagnostic is more precise.
      const fromDiagnostic = statusIn(diagnostic);
      if (fromDiagnostic && (!status || (/\.0\.0$/.test(status) && fromDiagnostic[0] === status[0]))) status = fromDiagnostic;
      if (!status && diagnostic) {
        const reply = SMTP_REPLY.exec(diagnostic)?.[1];
        if (reply) status = `${reply[0]}.0.0`;
      }
      const action = block.get('action')?.split(/[\s(;]/)[0].toLowerCase() ?? null;
      const classified = classifyReason({ status, diagnostic, action, context });
      return {
        recipient: addressField(block.get('final-recipient')) ?? addressField(block.get('original-recipient')),
        action,
        status,
        diagnostic,
        reason: classified.reason,
        hard: classified.hard && action !== 'delayed',
      };
    });
  const failed = recipients.find((r) => r.action === 'failed' || (!r.action && r.status?.startsWith('5')));
  const delayed = recipients.find((r) => r.action === 'delayed');
  const delivered = recipients.find((r) => r.action === 'delivered' || r.action === 'relayed' || r.action === 'expanded');
  const primary = failed ?? delayed ?? recipients[0];
  const headers = originalHeaders(mail, rawText);
  const report: BounceReport = {
    ...empty(failed ? 'bounce' : delayed ? 'delay' : delivered ? 'delivered' : 'unknown'),
    reason: primary?.reason ?? null,
    source: 'dsn',
    recipients,
    recipient: primary?.recipient ?? null,
    status: primary?.status ?? null,
    diagnostic: primary?.diagnostic ?? null,
    originalMessageId: headers ? messageIdIn(headers) : messageIdIn(mail.text ?? ''),
  };
  report.hard = report.kind === 'bounce' && Boolean(primary?.hard);
  return report;
}

function readArf(mail: ParsedMail, rawText: string, reportText: string): BounceReport {
  const fields = parseFieldBlocks(reportText)[0] ?? new Map<string, string>();
  const feedbackType = (fields.get('feedback-type') ?? 'other').split(/[\s;]/)[0].toLowerCase();
  const headers = originalHeaders(mail, rawText);
  let recipient = addressField(fields.get('original-rcpt-to'));
  if (!recipient && headers) {
    const to = parseFieldBlocks(headers)[0]?.get('to');
    recipient = addressField(to);
  }
  const agent = fields.get('user-agent');
  return {
    ...empty(COMPLAINT_TYPES.has(feedbackType) ? 'complaint' : 'unknown'),
    reason: 'complaint',
    source: 'arf',
    feedbackType,
    recipient,
    diagnostic: `Feedback-Type: ${feedbackType}${agent ? ` (${agent})` : ''}`,
    originalMessageId: headers ? messageIdIn(headers) : null,
  };
}

const BOUNCE_SENDER = /^(mailer-daemon|postmaster|mail-daemon|mailerdaemon|maildaemon|mdaemon)@/i;
const BOUNCE_SENDER_NAME = /mail delivery (subsystem|system|service)|mailer.daemon/i;
const BOUNCE_SUBJECT =
  /undeliver|returned mail|returning message|delivery (status notification|failure|failed|has failed|problem|incomplete|notification)|failure notice|mail delivery failed|could not be delivered|not (be )?delivered|non.?deliver|returned to sender|delayed mail|delivery delayed|warning: could not send/i;
const AUTO_REPLY_SUBJECT = /^(out of (the )?office|automatic reply|auto.?reply|autoreply|vacation|abwesenheit|absence|r[ée]ponse automatique)/i;
const DELAY_TEXT = /\b(delayed|will (continue|keep) (trying|to try|retrying)|not yet been delivered|has not been delivered yet|still (being )?retried|temporarily (deferred|unable)|will retry)\b/i;
// Wordings without a status code, mapped to the code a standard bounce would carry.
const PHRASES: Array<[RegExp, string]> = [
  [/user unknown|unknown user|no such (user|recipient|mailbox|address)|mailbox (not found|unavailable|does not exist)|recipient (address )?rejected|unknown recipient|invalid (recipient|mailbox)|no mailbox here|address (does not exist|not found)|account (is |has been )?(disabled|deactivated|closed)|user (does not exist|not found)|doesn't have an? .*account/i, '5.1.1'],
  [/host (or domain name )?not found|domain (not found|does not exist)|unrouteable|no mx|name service error/i, '5.1.2'],
  [/mailbox (is )?full|over ?quota|quota exceeded|insufficient (disk )?space/i, '4.2.2'],
  [/message (is )?too (large|big)|exceeds (the )?(maximum )?(message )?size/i, '5.3.4'],
  [/spam|blocked|blacklist|blocklist|policy|not allowed|denied/i, '5.7.1'],
];

/** The line holding `index` (from `index` itself when `fromIndex`), with its wrapped continuation. */
function lineAround(text: string, index: number, fromIndex = false): string {
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
function explanationOf(text: string): { explanation: string; copy: string } {
  const markers = /this is a copy of the message|below this line is a copy|original message (follows|headers)|returned message follows|--- ?original message|the original message was received|message headers follow|unsent message below|header of the original message|below is a copy of the original|returned message --/gi;
  // The first marker with an explanation before it ("The original message was received at…"
  // opens sendmail's bounces, it does not end them).
  for (const marker of text.matchAll(markers)) {
    const lineStart = text.lastIndexOf('\n', marker.index) + 1;
    if (text.slice(0, lineStart).replace(/\s+/g, '').length < 40) continue;
    return { explanation: text.slice(0, lineStart), copy: text.slice(lineStart) };
  }
  return { explanation: text, copy: '' };
}

function readHeuristic(mail: ParsedMail, rawText: string): BounceReport {
  const from = firstAddress(mail.from) ?? '';
  const fromName = mail.from?.value?.[0]?.name ?? '';
  const subject = mail.subject ?? '';
  const fromDaemon = BOUNCE_SENDER.test(from) || BOUNCE_SENDER_NAME.test(fromName);
  const failedHeader = mail.headers.get('x-failed-recipients');
  if (!fromDaemon && !BOUNCE_SUBJECT.test(subject) && !failedHeader) return empty();
  if (!fromDaemon && AUTO_REPLY_SUBJECT.test(subject)) return empty();

  const text = (mail.text ?? '').slice(0, HEURISTIC_TEXT_LIMIT).replace(/\r\n?/g, '\n');
  const { explanation, copy } = explanationOf(text);
  const own = new Set([from, firstAddress(mail.to)].filter(Boolean));

  // The failed recipient: Exim's header, qmail's "<addr>:" line, else the first address named.
  let recipient = addressField(typeof failedHeader === 'string' ? failedHeader : undefined);
  if (!recipient) recipient = addressField(/^<([^>\s]+@[^>\s]+)>:\s*$/m.exec(explanation)?.[1]);
  if (!recipient) {
    for (const match of explanation.matchAll(new RegExp(ADDRESS.source, 'g'))) {
      const address = match[0].toLowerCase();
      if (!own.has(address) && !BOUNCE_SENDER.test(address)) {
        recipient = address;
        break;
      }
    }
  }

  // The status: an enhanced code, else an SMTP reply code, else a known wording.
  let status: string | null = null;
  let diagnostic: string | null = null;
  const statusMatch = STATUS_CODE.exec(explanation);
  const replyMatch = SMTP_REPLY.exec(explanation);
  if (statusMatch) {
    status = `${statusMatch[1]}.${statusMatch[2]}.${statusMatch[3]}`;
    // "…: 550 5.1.1 <addr>: User unknown" reads best from the reply code on.
    const sameLine = replyMatch && replyMatch.index <= statusMatch.index && !explanation.slice(replyMatch.index, statusMatch.index).includes('\n');
    diagnostic = sameLine ? lineAround(explanation, replyMatch.index, true) : lineAround(explanation, statusMatch.index);
  } else if (replyMatch) {
    status = `${replyMatch[1][0]}.0.0`;
    diagnostic = lineAround(explanation, replyMatch.index, true);
  } else {
    for (const [pattern, code] of PHRASES) {
      const match = pattern.exec(explanation);
      if (match) {
        status = code;
        diagnostic = lineAround(explanation, match.index);
        break;
      }
    }
  }
  // A qmail-style line holding only the address is no diagnostic; the wording is on the next line.
  if (diagnostic && recipient && diagnostic.replace(/[<>:]/g, '').trim().toLowerCase() === recipient) diagnostic = null;

  const delayed = (status?.startsWith('4') || !status) && (DELAY_TEXT.test(subject) || DELAY_TEXT.test(explanation));
  const kind: BounceKind = delayed ? 'delay' : 'bounce';
  const headers = originalHeaders(mail, rawText);
  const action = kind === 'delay' ? 'delayed' : 'failed';
  // The whole explanation is read for the reason: vendors put the telling words around the code.
  const classified = classifyReason({ status, diagnostic, action, context: explanation.slice(0, 4000) });
  const hard = kind === 'bounce' && classified.hard;
  return {
    ...empty(kind),
    source: 'heuristic',
    recipient,
    status,
    diagnostic,
    reason: classified.reason,
    originalMessageId: headers ? messageIdIn(headers) : messageIdIn(copy),
    hard,
    recipients: recipient ? [{ recipient, action, status, diagnostic, reason: classified.reason, hard }] : [],
  };
}

function readSesNotification(type: string, text: string): BounceReport {
  const field = (name: string) => new RegExp(`"${name}"\\s*:\\s*"([^"]*)"`).exec(text)?.[1] ?? null;
  const recipient = field('emailAddress')?.toLowerCase() ?? null;
  if (type === 'Delivery') return { ...empty('delivered'), source: 'dsn', recipient };
  if (type === 'Complaint') {
    const feedbackType = field('complaintFeedbackType') ?? 'abuse';
    return { ...empty('complaint'), reason: 'complaint', source: 'arf', feedbackType, recipient, diagnostic: `Feedback-Type: ${feedbackType} (Amazon SES)` };
  }
  const status = statusIn(field('status'));
  const diagnostic = field('diagnosticCode')?.replace(/^[\w-]+\s*;\s*/, '') ?? null;
  const classified = classifyReason({ status, diagnostic, action: field('action') ?? 'failed' });
  const hard = classified.hard && field('bounceType') === 'Permanent';
  return {
    ...empty('bounce'), source: 'dsn', recipient, status, diagnostic, reason: classified.reason, hard,
    recipients: [{ recipient, action: 'failed', status, diagnostic, reason: classified.reason, hard }],
  };
}

/** What an inbound message says about an earlier delivery. Never throws for odd input. */
export async function parseBounce(raw: Buffer | string): Promise<BounceReport> {
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: false, skipTextLinks: true, skipImageLinks: true });
  } catch {
    return empty();
  }
  const deliveryStatus = mail.attachments.find((a) => /^message\/(global-)?delivery-status$/i.test(a.contentType));
  const rawText = typeof raw === 'string' ? raw : raw.toString('utf8');
  if (deliveryStatus) return readDsn(mail, rawText, deliveryStatus.content.toString('utf8'));
  const feedback = mail.attachments.find((a) => /^message\/feedback-report$/i.test(a.contentType));
  if (feedback) return readArf(mail, rawText, feedback.content.toString('utf8'));
  // Amazon SES notifications forwarded by e-mail (SNS): JSON, read field by field (SNS may wrap it).
  const sesType = /"notificationType"\s*:\s*"(Bounce|Complaint|Delivery)"/.exec(mail.text ?? '');
  if (sesType) return readSesNotification(sesType[1], mail.text ?? '');
  // Non-standard feedback loops: Microsoft JMRP ("complaint about message from <ip>" with the
  // message attached) and mailto unsubscribe requests (Apple Mail's "unsubscribe").
  const subjectLine = (mail.subject ?? '').trim();
  if (/^complaint about message from /i.test(subjectLine) || mail.headers.has('x-hmxmroriginalrecipient')) {
    const headers = originalHeaders(mail, rawText);
    const hmxmr = mail.headers.get('x-hmxmroriginalrecipient');
    const recipient = addressField(typeof hmxmr === 'string' ? hmxmr : undefined) ?? (headers ? addressField(parseFieldBlocks(headers)[0]?.get('to')) : null);
    return { ...empty('complaint'), reason: 'complaint', source: 'arf', feedbackType: 'abuse', recipient, diagnostic: 'Feedback loop complaint (non-ARF)', originalMessageId: headers ? messageIdIn(headers) : null };
  }
  if (/^unsubscribe$/i.test(subjectLine)) {
    return { ...empty('unknown'), reason: 'complaint', source: 'arf', feedbackType: 'opt-out', recipient: firstAddress(mail.from), diagnostic: 'Unsubscribe request' };
  }
  // Auto-replies (RFC 3834 Auto-Submitted, vacation headers and subjects) are never bounces.
  const header = (name: string) => {
    const value = mail.headers.get(name);
    return typeof value === 'string' ? value : value ? String((value as { value?: unknown }).value ?? value) : undefined;
  };
  const from = firstAddress(mail.from) ?? '';
  if (!BOUNCE_SENDER.test(from) && isAutoReply({ subject: mail.subject, autoSubmitted: header('auto-submitted'), xAutoreply: header('x-autoreply') ?? header('x-autorespond') })) {
    return { ...empty('auto_reply'), reason: 'auto_reply', recipient: from || null };
  }
  return readHeuristic(mail, rawText);
}
