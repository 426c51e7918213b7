// RFC 3464 delivery status notifications: one block of fields per recipient, read with the
// report's human-readable part beside it.
import type { ParsedMail } from 'mailparser';
import { BOUNCE_REASONS, classifyReason, type BounceReason } from '../bounce-reasons.ts';
import { empty, type BounceReport, type RecipientStatus } from './report.ts';
import {
  HEURISTIC_TEXT_LIMIT,
  SMTP_REPLY,
  addressField,
  bodyTextOf,
  domainOf,
  explanationOf,
  messageIdIn,
  originalHeaders,
  parseFieldBlocks,
  recipientLine,
  remoteHostIn,
  reporterOf,
  statusIn,
} from './text.ts';

// PowerMTA states its own classification of each failure (X-PowerMTA-BounceCategory).
const VENDOR_CATEGORIES: Record<string, BounceReason> = {
  'bad-domain': 'host_unknown',
  'bad-mailbox': 'user_unknown',
  'inactive-mailbox': 'suspended',
  'message-expired': 'expired',
  'no-answer-from-host': 'network_error',
  'policy-related': 'policy_block',
  'quota-issues': 'mailbox_full',
  'routing-errors': 'system_error',
  'spam-related': 'content_spam',
};

/** Delivery-status fields carry no charset; Japanese MTAs (Domino, au) write ISO-2022-JP in them. */
function decodeJis(text: string): string {
  return /\x1b\$[@B]/.test(text) ? new TextDecoder('iso-2022-jp').decode(Buffer.from(text, 'utf8')) : text;
}

export function readDsn(mail: ParsedMail, rawText: string, statusText: string): BounceReport {
  const context = explanationOf(bodyTextOf(mail, rawText).slice(0, HEURISTIC_TEXT_LIMIT)).explanation.slice(0, 4000);
  // The first block is per-message (Reporting-MTA…); some MTAs omit it, so blocks are picked by content.
  const recipients: RecipientStatus[] = parseFieldBlocks(decodeJis(statusText))
    .filter((block) => block.has('final-recipient') || block.has('original-recipient') || block.has('action'))
    .map((block) => {
      const diagnosticField = block.get('diagnostic-code') ?? null;
      const finalRecipient = addressField(block.get('final-recipient')) ?? addressField(block.get('original-recipient'));
      // No Diagnostic-Code: the human-readable part often has the reply on the recipient's line.
      const diagnostic = diagnosticField
        ? diagnosticField.replace(/^[\w-]+\s*;\s*/, '').trim() || null
        : finalRecipient
          ? recipientLine(context, finalRecipient)
          : null;
      let status = statusIn(block.get('status'));
      // "Status: 5.0.0" beside "550 5.1.1 …": the diagnostic is more precise.
      // The code right after the reply code is the receiver's ("5.1.0 - … 550-'5.7.1 …": 5.7.1).
      const receiverCode = statusIn(/[45]\d\d[ -]'?([245]\.\d{1,3}\.\d{1,3})/.exec(diagnostic ?? '')?.[1]);
      const fromDiagnostic = receiverCode ?? statusIn(diagnostic);
      if (fromDiagnostic && (!status || (/\.0\.0$/.test(status) && fromDiagnostic[0] === status[0]))) status = fromDiagnostic;
      // The reason is read from the code the receiver answered with: the reporting MTA's Status
      // summarises (4.4.7 "gave up", 5.1.1 beside "552 5.2.2 Over quota").
      const reasonStatus = receiverCode && status && receiverCode[0] === status[0] ? receiverCode : status;
      if (!status && diagnostic) {
        const reply = SMTP_REPLY.exec(diagnostic)?.[1];
        if (reply) status = `${reply[0]}.0.0`;
      }
      const action =
        block
          .get('action')
          ?.split(/[\s(;]/)[0]
          .toLowerCase() ?? null;
      const category = VENDOR_CATEGORIES[block.get('x-powermta-bouncecategory')?.toLowerCase() ?? ''];
      const classified = category
        ? { reason: category, hard: BOUNCE_REASONS[category].hard && !status?.startsWith('4') }
        : classifyReason({
            status: reasonStatus,
            diagnostic,
            diagnosticType: diagnosticField ? (/^\s*([\w-]+)\s*;/.exec(diagnosticField)?.[1] ?? null) : null,
            action,
            context,
            report: true,
            // The receiving host, and the recipient's domain (receivers are known by either).
            host: `${block.get('remote-mta') ?? remoteHostIn(context) ?? ''} ${domainOf(finalRecipient)}`,
            reporter: reporterOf(mail, diagnostic, context, reasonStatus),
          });
      return {
        recipient: finalRecipient,
        action,
        status,
        diagnostic,
        reason: classified.reason,
        hard: classified.hard && action !== 'delayed',
      };
    });
  const failed = recipients.find((r) => r.action === 'failed' || (!r.action && r.status?.startsWith('5')));
  const delayed = recipients.find((r) => r.action === 'delayed');
  // "deliverable": an address verification report (Postfix's sendmail -bv).
  const delivered = recipients.find(
    (r) => r.action === 'delivered' || r.action === 'relayed' || r.action === 'expanded' || r.action === 'deliverable',
  );
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
