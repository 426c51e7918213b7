// Reads mail that comes back to a VERP address: RFC 3464 delivery status notifications
// (multipart/report; report-type=delivery-status), ARF complaint reports (RFC 5965,
// report-type=feedback-report) and the non-standard bounces some servers still send (qmail,
// old Exim, appliances, vendors' own formats), recognized by their sender, subject, headers,
// status codes and wording. The readers live in src/mail/bounce/: dsn.ts, feedback.ts,
// heuristic.ts, recipient.ts (who failed, when no field says); what receivers and reporting
// products mean by their own codes and wordings in receivers.ts, reporters.ts and agents.ts.
import type { ParsedMail } from 'mailparser';
import { simpleParser } from './parse-mail.ts';
import { isAutoReply } from './bounce-reasons.ts';
import { readDsn } from './bounce/dsn.ts';
import { readArf, readJmrp, readSesNotification } from './bounce/feedback.ts';
import { BOUNCE_SENDER, readHeuristic } from './bounce/heuristic.ts';
import { failedRecipientIn } from './bounce/recipient.ts';
import { empty, type BounceReport } from './bounce/report.ts';
import { HEURISTIC_TEXT_LIMIT, bodyTextOf, explanationOf, firstAddress, originalHeaders, rawPart, returnPathIn } from './bounce/text.ts';

export type { BounceKind, BounceReport, RecipientStatus } from './bounce/report.ts';
export { originalHeaders, parseFieldBlocks } from './bounce/text.ts';

/** What an inbound message says about an earlier delivery. Never throws for odd input. */
export async function parseBounce(raw: Buffer | string): Promise<BounceReport> {
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: false, skipTextLinks: true, skipImageLinks: true });
  } catch {
    return empty();
  }
  const rawText = typeof raw === 'string' ? raw : raw.toString('utf8');
  const report = read(mail, rawText);
  // A bounce whose status fields name no address (Final-Recipient: a mailbox path, "@host", no
  // recipient block at all): the text, X-Failed-Recipients or the returned message names it.
  if ((report.kind === 'bounce' || report.kind === 'delay') && !report.recipient && report.source !== 'heuristic') {
    const own = new Set([firstAddress(mail.from), firstAddress(mail.to)]);
    const explanation = explanationOf(bodyTextOf(mail, rawText).slice(0, HEURISTIC_TEXT_LIMIT).replace(/\r\n?/g, '\n')).explanation;
    report.recipient = failedRecipientIn(mail, rawText, explanation, own);
  }
  if ((report.kind === 'bounce' || report.kind === 'delay' || report.kind === 'complaint') && !report.originalSender) {
    report.originalSender = returnPathIn(originalHeaders(mail, rawText));
  }
  return report;
}

function read(mail: ParsedMail, rawText: string): BounceReport {
  const deliveryStatus = mail.attachments.find((a) => /^message\/(global-)?delivery-status$/i.test(a.contentType));
  if (deliveryStatus) {
    const report = readDsn(mail, rawText, deliveryStatus.content.toString('utf8'));
    if (report.recipients.length) return report;
    // A delivery-status part without recipient fields: the text may still name who failed.
    const read = readHeuristic(mail, rawText);
    return read.kind === 'unknown' ? { ...report, reason: 'unknown' } : read;
  }
  // A report whose boundary does not match its parts (it happens): find the part in the raw text.
  const rawStatus = rawPart(rawText, /^content-type:[ \t]*message\/(global-)?delivery-status\b/im);
  if (rawStatus && /^(final-recipient|original-recipient|action)\s*:/im.test(rawStatus)) return readDsn(mail, rawText, rawStatus);
  // Delivery-status fields written into the text itself (no message/delivery-status part), or
  // quoted in a bounce someone forwarded ("> Final-Recipient: …").
  const text = bodyTextOf(mail, rawText);
  const body = /^>[ \t]?(reporting-mta|final-recipient)[ \t]*:/im.test(text) ? text.replace(/^>[ \t]?/gm, '') : text;
  const inline = /^(reporting-mta|final-recipient)[ \t]*:/im.exec(body);
  if (inline && /^action[ \t]*:/im.test(body.slice(inline.index))) return readDsn(mail, rawText, body.slice(inline.index));
  const feedback = mail.attachments.find((a) => /^message\/feedback-report$/i.test(a.contentType));
  if (feedback) return readArf(mail, rawText, feedback.content.toString('utf8'));
  // Feedback fields outside a message/feedback-report part: a broken boundary, a text/plain
  // part, or the fields written into the text (older AOL, Comcast and appliance reports).
  const rawFeedback = rawPart(rawText, /^content-type:[ \t]*message\/feedback-report\b/im);
  if (rawFeedback && /^feedback-type[ \t]*:/im.test(rawFeedback)) return readArf(mail, rawText, rawFeedback);
  const inlineFeedback = /^feedback-type[ \t]*:[ \t]*[a-z-]+[ \t]*$/im.exec(body);
  if (
    inlineFeedback &&
    /^(user-agent|version|original-rcpt-to|original-mail-from|removal-recipient)[ \t]*:/im.test(body.slice(inlineFeedback.index))
  ) {
    return readArf(mail, rawText, body.slice(inlineFeedback.index));
  }
  // Amazon SES notifications forwarded by e-mail (SNS): JSON, read field by field (the SNS
  // envelope carries SES's JSON as an escaped string).
  const snsText = (mail.text ?? '').includes('\\"notificationType\\"') ? (mail.text ?? '').replace(/\\"/g, '"') : (mail.text ?? '');
  const sesType = /"notificationType"\s*:\s*"(Bounce|Complaint|Delivery)"/.exec(snsText);
  if (sesType) return readSesNotification(sesType[1], snsText);
  // Non-standard feedback loops: Microsoft JMRP ("complaint about message from <ip>" with the
  // message attached) and mailto unsubscribe requests (Apple Mail's "unsubscribe").
  const subjectLine = (mail.subject ?? '').trim();
  if (
    /^complaint about message from /i.test(subjectLine) ||
    mail.headers.has('x-hmxmroriginalrecipient') ||
    /^x-hmxmroriginalrecipient:/im.test(originalHeaders(mail, rawText) ?? '')
  ) {
    return readJmrp(mail, rawText);
  }
  if (/^unsubscribe$/i.test(subjectLine)) {
    return {
      ...empty('unknown'),
      reason: 'complaint',
      source: 'arf',
      feedbackType: 'opt-out',
      recipient: firstAddress(mail.from),
      diagnostic: 'Unsubscribe request',
    };
  }
  // Auto-replies (RFC 3834 Auto-Submitted, vacation headers and subjects) are never bounces.
  const header = (name: string) => {
    const value = mail.headers.get(name);
    return typeof value === 'string' ? value : value ? String((value as { value?: unknown }).value ?? value) : undefined;
  };
  const from = firstAddress(mail.from) ?? mail.from?.text?.replace(/"/g, '').trim().toLowerCase() ?? '';
  if (
    !BOUNCE_SENDER.test(from) &&
    isAutoReply({
      subject: mail.subject,
      autoSubmitted: header('auto-submitted'),
      xAutoreply: header('x-autoreply') ?? header('x-autorespond'),
    })
  ) {
    return { ...empty('auto_reply'), reason: 'auto_reply', recipient: from || null };
  }
  return readHeuristic(mail, rawText);
}
