// Non-standard bounces (qmail, old Exim, appliances, vendors' own formats), recognised by their
// sender, subject and headers and read from their wording, codes and the lines about a recipient.
import type { ParsedMail } from 'mailparser';
import { classifyReason } from '../bounce-reasons.ts';
import { empty, type BounceKind, type BounceReport } from './report.ts';
import { failedRecipientIn } from './recipient.ts';
import { reporterName } from './reporters.ts';
import {
  HEURISTIC_TEXT_LIMIT,
  SMTP_REPLY,
  STATUS_CODE,
  bodyTextOf,
  domainOf,
  explanationOf,
  firstAddress,
  lineAround,
  messageIdIn,
  originalHeaders,
  recipientLine,
  remoteHostIn,
  reportHeaders,
  reporterOf,
} from './text.ts';

export const BOUNCE_SENDER = /^(mailer-daemon|postmaster|mail-daemon|mailerdaemon|maildaemon|mdaemon)(@|$)/i;
export const BOUNCE_SENDER_NAME = /mail delivery (subsystem|system|service)|mailer.daemon/i;
export const BOUNCE_SUBJECT =
  /undeliver|returned mail|returning message|delivery (status notification|failure|failed|has failed|problem|incomplete|notification)|failure notice|mail delivery failed|could not be delivered|not (be )?delivered|non.?deliver|returned to sender|delayed mail|delivery delayed|warning: could not send/i;
export const AUTO_REPLY_SUBJECT =
  /^(out of (the )?office|automatic reply|auto.?reply|autoreply|vacation|abwesenheit|absence|r[ée]ponse automatique)/i;
export const DELAY_TEXT =
  /\b(delayed|will (continue|keep) (trying|to try|retrying)|not yet been delivered|has not been delivered yet|still (being )?retried|temporarily (deferred|unable)|will retry)\b/i;
// Wordings without a status code, mapped to the code a standard bounce would carry.
export const PHRASES: Array<[RegExp, string]> = [
  [
    /user unknown|unknown user|no such (user|recipient|mailbox|address)|mailbox (not found|unavailable|does not exist)|recipient (address )?rejected|unknown recipient|invalid (recipient|mailbox)|no mailbox here|address (does not exist|not found)|account (is |has been )?(disabled|deactivated|closed)|user (does not exist|not found)|doesn't have an? .*account/i,
    '5.1.1',
  ],
  [/host (or domain name )?not found|domain (not found|does not exist)|unrouteable|no mx|name service error/i, '5.1.2'],
  [/mailbox (is )?full|over ?quota|quota exceeded|insufficient (disk )?space/i, '4.2.2'],
  [/message (is )?too (large|big)|exceeds (the )?(maximum )?(message )?size/i, '5.3.4'],
  [/spam|blocked|blacklist|blocklist|policy|not allowed|denied/i, '5.7.1'],
];

export function readHeuristic(mail: ParsedMail, rawText: string): BounceReport {
  const from = firstAddress(mail.from) ?? mail.from?.text?.replace(/"/g, '').trim().toLowerCase() ?? '';
  const fromName = mail.from?.value?.[0]?.name ?? '';
  const subject = mail.subject ?? '';
  const fromDaemon = BOUNCE_SENDER.test(from) || BOUNCE_SENDER_NAME.test(fromName);
  const failedHeader = mail.headers.get('x-failed-recipients');
  // Products whose bounces come from no daemon address and under no telling subject (au, fml, Verizon).
  const reporter = reporterName(reportHeaders(mail));
  if (!fromDaemon && !BOUNCE_SUBJECT.test(subject) && !failedHeader && !reporter) return empty();
  if (!fromDaemon && AUTO_REPLY_SUBJECT.test(subject)) return empty();

  const text = bodyTextOf(mail, rawText).slice(0, HEURISTIC_TEXT_LIMIT).replace(/\r\n?/g, '\n');
  const { explanation, copy } = explanationOf(text);
  const own = new Set([from, firstAddress(mail.to)].filter(Boolean));

  const recipient = failedRecipientIn(mail, rawText, explanation, own);

  // The status: an enhanced code, else an SMTP reply code, else a known wording.
  let status: string | null = null;
  let diagnostic: string | null = null;
  // A code guessed from the wording is reported, but the reason is read from the words alone.
  let guessed = false;
  const statusMatch = STATUS_CODE.exec(explanation);
  const replyMatch = SMTP_REPLY.exec(explanation);
  if (statusMatch) {
    status = `${statusMatch[1]}.${statusMatch[2]}.${statusMatch[3]}`;
    // "…: 550 5.1.1 <addr>: User unknown" reads best from the reply code on.
    const sameLine =
      replyMatch && replyMatch.index <= statusMatch.index && !explanation.slice(replyMatch.index, statusMatch.index).includes('\n');
    diagnostic = sameLine ? lineAround(explanation, replyMatch.index, true) : lineAround(explanation, statusMatch.index);
  } else if (replyMatch) {
    status = `${replyMatch[1][0]}.0.0`;
    diagnostic = lineAround(explanation, replyMatch.index, true);
  } else {
    for (const [pattern, code] of PHRASES) {
      const match = pattern.exec(explanation);
      if (match) {
        status = code;
        guessed = true;
        diagnostic = lineAround(explanation, match.index);
        break;
      }
    }
  }
  if (!diagnostic && recipient) diagnostic = recipientLine(explanation, recipient);
  // A qmail-style line holding only the address is no diagnostic; the wording is on the next line.
  if (diagnostic && recipient && diagnostic.replace(/[<>:]/g, '').trim().toLowerCase() === recipient) diagnostic = null;

  const delayed = (status?.startsWith('4') || !status) && (DELAY_TEXT.test(subject) || DELAY_TEXT.test(explanation));
  const kind: BounceKind = delayed ? 'delay' : 'bounce';
  const headers = originalHeaders(mail, rawText);
  const action = kind === 'delay' ? 'delayed' : 'failed';
  // The whole explanation is read for the reason: vendors put the telling words around the code.
  const classified = classifyReason({
    status: guessed && status ? `${status[0]}.0.0` : status,
    diagnostic,
    action,
    context: explanation.slice(0, 4000),
    report: true,
    host: `${remoteHostIn(explanation) ?? ''} ${domainOf(recipient)}`,
    reporter: reporterOf(mail, diagnostic, explanation.slice(0, 4000)),
  });
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
