// Complaints and provider notifications: ARF feedback reports (RFC 5965) in their standard and
// providers' own shapes (Yahoo CFL, Microsoft JMRP, reports whose feedback fields sit in the
// text), and Amazon SES notifications forwarded by e-mail.
import type { ParsedMail } from 'mailparser';
import { classifyReason } from '../bounce-reasons.ts';
import { empty, type BounceReport } from './report.ts';
import { addressField, messageIdIn, originalHeaders, parseFieldBlocks, returnPathIn, senderField, statusIn } from './text.ts';

// ARF types that mean "this recipient does not want this mail" (RFC 5965 §7.3).
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

export function readArf(mail: ParsedMail, rawText: string, reportText: string): BounceReport {
  const fields = parseFieldBlocks(reportText).find((block) => block.has('feedback-type')) ?? new Map<string, string>();
  const feedbackType = (fields.get('feedback-type') ?? 'other').split(/[\s;]/)[0].toLowerCase();
  const headers = originalHeaders(mail, rawText);
  const agent = fields.get('user-agent');
  return {
    ...empty(COMPLAINT_TYPES.has(feedbackType) ? 'complaint' : 'unknown'),
    reason: 'complaint',
    source: 'arf',
    feedbackType,
    // Opt-out reports name the address to remove (Removal-Recipient); redacted reports name none.
    recipient:
      unredacted(addressField(fields.get('original-rcpt-to'))) ??
      addressField(fields.get('removal-recipient')) ??
      complainantIn(mail, headers),
    diagnostic: `Feedback-Type: ${feedbackType}${agent ? ` (${agent})` : ''}`,
    originalMessageId: (headers ? messageIdIn(headers) : null) ?? messageIdInText(mail.text ?? ''),
    originalSender: senderField(fields.get('original-mail-from')) ?? returnPathIn(headers),
  };
}

/**
 * Microsoft's JMRP (and Amazon SES's copy of it): a multipart/mixed "complaint about message
 * from <ip>" with the complained-about message attached, whose X-HmXmrOriginalRecipient (on
 * the report or on the attached message) names the complainant.
 */
export function readJmrp(mail: ParsedMail, rawText: string): BounceReport {
  const headers = originalHeaders(mail, rawText);
  return {
    ...empty('complaint'),
    reason: 'complaint',
    source: 'arf',
    feedbackType: 'abuse',
    recipient: complainantIn(mail, headers),
    diagnostic: 'Feedback loop complaint (Microsoft JMRP)',
    originalMessageId: headers ? messageIdIn(headers) : null,
    originalSender: returnPathIn(headers),
  };
}

/** AT&T-style reports whose copy has no Message-ID name it in their text ("with the message-id of …"). */
function messageIdInText(text: string): string | null {
  const id = /message-id of[ \t]+<?([^\s<>]+@[^\s<>]+?)>?(?=[\s,;]|$)/i.exec(text)?.[1];
  return id ? `<${id}>` : null;
}

/** The complainant a report shows outside its feedback fields: Microsoft's header, else the returned message's To. */
function complainantIn(mail: ParsedMail, headers: string | null): string | null {
  const own = mail.headers.get('x-hmxmroriginalrecipient');
  const returned = headers ? parseFieldBlocks(headers)[0] : undefined;
  return unredacted(
    addressField(typeof own === 'string' ? own : undefined) ??
      addressField(returned?.get('x-hmxmroriginalrecipient')) ??
      addressField(returned?.get('to')),
  );
}

/** AOL, Comcast and others replace the complainant with `redacted@<their domain>`: that names nobody. */
function unredacted(address: string | null): string | null {
  return address && !/^redacted@/.test(address) ? address : null;
}

export function readSesNotification(type: string, text: string): BounceReport {
  const field = (name: string) => new RegExp(`"${name}"\\s*:\\s*"([^"]*)"`).exec(text)?.[1] ?? null;
  // Bounces and complaints name `emailAddress`; deliveries list `recipients` (and `destination`).
  const listed = /"(?:recipients|destination)"\s*:\s*\[\s*"([^"]+)"/.exec(text)?.[1];
  const recipient = (field('emailAddress') ?? listed)?.toLowerCase() ?? null;
  if (type === 'Delivery') return { ...empty('delivered'), source: 'dsn', recipient };
  if (type === 'Complaint') {
    const feedbackType = field('complaintFeedbackType') ?? 'abuse';
    return {
      ...empty('complaint'),
      reason: 'complaint',
      source: 'arf',
      feedbackType,
      recipient,
      diagnostic: `Feedback-Type: ${feedbackType} (Amazon SES)`,
    };
  }
  const status = statusIn(field('status'));
  const diagnostic = field('diagnosticCode')?.replace(/^[\w-]+\s*;\s*/, '') ?? null;
  const classified = classifyReason({ status, diagnostic, action: field('action') ?? 'failed', report: true });
  const hard = classified.hard && field('bounceType') === 'Permanent';
  return {
    ...empty('bounce'),
    source: 'dsn',
    recipient,
    status,
    diagnostic,
    reason: classified.reason,
    hard,
    recipients: [{ recipient, action: 'failed', status, diagnostic, reason: classified.reason, hard }],
  };
}
