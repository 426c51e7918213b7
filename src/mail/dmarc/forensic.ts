// DMARC failure (forensic) reports: RFC 6591 authentication failure reports in the Abuse
// Reporting Format (RFC 5965), i.e. multipart/report; report-type=feedback-report whose
// message/feedback-report part says Feedback-Type: auth-failure. Only the original message's
// headers are kept, never its body (RFC 6591 §6: reports can carry personal data).
import { createHash } from 'node:crypto';
import type { ParsedMail } from 'mailparser';
import { simpleParser } from '../parse-mail.ts';
import { originalHeaders, parseFieldBlocks } from '../bounces.ts';
import { DmarcReportError } from './errors.ts';

/** The original message's headers are kept up to this size. */
const MAX_ORIGINAL_HEADERS = 32 * 1024;
const MAX_FIELD = 2000;

export interface ForensicReport {
  /** Who sent the report: its From address and that address's domain (the reporting organization). */
  reporterEmail: string | null;
  orgName: string;
  /** A stable id of the report: its Message-ID, else a digest of its feedback fields. */
  reportId: string;
  feedbackType: string;
  userAgent: string | null;
  version: string | null;
  authFailure: string | null;
  deliveryResult: string | null;
  identityAlignment: string | null;
  sourceIp: string | null;
  /** When the failing message arrived (epoch ms), if the report says. */
  arrivalMs: number | null;
  originalMailFrom: string | null;
  originalRcptTo: string | null;
  originalEnvelopeId: string | null;
  reportedDomain: string;
  reportedUri: string | null;
  authenticationResults: string | null;
  dkimDomain: string | null;
  dkimIdentity: string | null;
  dkimSelector: string | null;
  dkimCanonicalizedHeader: string | null;
  spfDns: string | null;
  /** From the original message's headers. */
  original: {
    from: string | null;
    to: string | null;
    subject: string | null;
    date: string | null;
    messageId: string | null;
    headers: string | null;
  };
}

const clip = (value: string | undefined | null, max = MAX_FIELD) => (value ? value.slice(0, max) : null);
const bare = (value: string | null) => (value ? value.replace(/^<|>$/g, '').trim() || null : null);

function firstAddress(mail: ParsedMail): string | null {
  const entries = mail.from?.value ?? [];
  return entries.find((entry) => entry.address)?.address?.toLowerCase() ?? null;
}

function domainOfAddress(value: string | null): string | null {
  const at = value?.lastIndexOf('@') ?? -1;
  return value && at > 0
    ? value
        .slice(at + 1)
        .replace(/>.*$/, '')
        .trim()
        .toLowerCase() || null
    : null;
}

/** True when the parsed message holds a feedback report (of any type). */
export function hasFeedbackReport(mail: ParsedMail): boolean {
  return mail.attachments.some((a) => /^message\/feedback-report$/i.test(a.contentType));
}

/** Reads an auth-failure report from the whole report message. Throws DmarcReportError. */
export async function parseForensicReport(raw: Buffer): Promise<ForensicReport> {
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextLinks: true, skipImageLinks: true });
  } catch (error) {
    throw new DmarcReportError(`The report message could not be parsed: ${(error as Error).message}`);
  }
  const part = mail.attachments.find((a) => /^message\/feedback-report$/i.test(a.contentType));
  if (!part) throw new DmarcReportError('The message holds no message/feedback-report part');
  const feedbackText = part.content.toString('utf8');
  const fields = parseFieldBlocks(feedbackText)[0] ?? new Map<string, string>();
  const get = (name: string) => clip(fields.get(name));
  const feedbackType = (fields.get('feedback-type') ?? '').split(/[\s;]/)[0].toLowerCase();
  if (feedbackType !== 'auth-failure') {
    throw new DmarcReportError(`Feedback-Type "${feedbackType || 'missing'}" is not a DMARC failure report (auth-failure)`);
  }

  const headersText = originalHeaders(mail, raw.toString('utf8'));
  const headers = headersText ? (parseFieldBlocks(headersText)[0] ?? new Map<string, string>()) : new Map<string, string>();
  const originalFrom = clip(headers.get('from'));
  const reportedDomain = (fields.get('reported-domain') ?? domainOfAddress(originalFrom) ?? '').toLowerCase().trim();
  if (!reportedDomain)
    throw new DmarcReportError('The report names no domain (no Reported-Domain field and no From header of the original message)');

  const arrival = fields.get('arrival-date') ?? fields.get('received-date');
  const arrivalMs = arrival ? Date.parse(arrival) : NaN;
  const reporterEmail = firstAddress(mail);
  const messageId = bare(clip(mail.messageId ?? null, 500));
  return {
    reporterEmail,
    orgName: domainOfAddress(reporterEmail) ?? clip(fields.get('user-agent'), 200) ?? 'unknown',
    reportId: messageId ?? createHash('sha256').update(feedbackText).digest('hex').slice(0, 32),
    feedbackType,
    userAgent: get('user-agent'),
    version: get('version'),
    authFailure: lower(get('auth-failure')),
    deliveryResult: lower(get('delivery-result')),
    identityAlignment: lower(get('identity-alignment')),
    sourceIp: get('source-ip'),
    arrivalMs: Number.isFinite(arrivalMs) ? arrivalMs : null,
    originalMailFrom: bare(get('original-mail-from')),
    originalRcptTo: bare(get('original-rcpt-to')),
    originalEnvelopeId: get('original-envelope-id'),
    reportedDomain: reportedDomain.slice(0, 253),
    reportedUri: get('reported-uri'),
    authenticationResults: get('authentication-results'),
    dkimDomain: lower(get('dkim-domain')),
    dkimIdentity: get('dkim-identity'),
    dkimSelector: get('dkim-selector'),
    dkimCanonicalizedHeader: get('dkim-canonicalized-header'),
    spfDns: get('spf-dns'),
    original: {
      from: originalFrom,
      to: clip(headers.get('to')),
      subject: clip(headers.get('subject')),
      date: clip(headers.get('date')),
      messageId: clip(headers.get('message-id')),
      headers: headersText ? headersText.slice(0, MAX_ORIGINAL_HEADERS) : null,
    },
  };
}

function lower(value: string | null): string | null {
  return value === null ? null : value.toLowerCase();
}
