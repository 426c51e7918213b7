// Complaints and provider notifications: ARF feedback reports (RFC 5965) and Amazon SES
// notifications forwarded by e-mail.
import type { ParsedMail } from 'mailparser';
import { classifyReason } from '../bounce-reasons.ts';
import { empty, type BounceReport } from './report.ts';
import { addressField, messageIdIn, originalHeaders, parseFieldBlocks, statusIn } from './text.ts';

// ARF types that mean "this recipient does not want this mail" (RFC 5965 §7.3).
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

export function readArf(mail: ParsedMail, rawText: string, reportText: string): BounceReport {
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

export function readSesNotification(type: string, text: string): BounceReport {
  const field = (name: string) => new RegExp(`"${name}"\\s*:\\s*"([^"]*)"`).exec(text)?.[1] ?? null;
  const recipient = field('emailAddress')?.toLowerCase() ?? null;
  if (type === 'Delivery') return { ...empty('delivered'), source: 'dsn', recipient };
  if (type === 'Complaint') {
    const feedbackType = field('complaintFeedbackType') ?? 'abuse';
    return { ...empty('complaint'), reason: 'complaint', source: 'arf', feedbackType, recipient, diagnostic: `Feedback-Type: ${feedbackType} (Amazon SES)` };
  }
  const status = statusIn(field('status'));
  const diagnostic = field('diagnosticCode')?.replace(/^[\w-]+\s*;\s*/, '') ?? null;
  const classified = classifyReason({ status, diagnostic, action: field('action') ?? 'failed', report: true });
  const hard = classified.hard && field('bounceType') === 'Permanent';
  return {
    ...empty('bounce'), source: 'dsn', recipient, status, diagnostic, reason: classified.reason, hard,
    recipients: [{ recipient, action: 'failed', status, diagnostic, reason: classified.reason, hard }],
  };
}
