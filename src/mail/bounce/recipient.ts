// Who failed, when a report has no delivery-status fields that name it: the wordings MTAs use
// around the failed address, in the order of how sure each one is, then the returned message.
import type { ParsedMail } from 'mailparser';
import { ADDRESS, addressField, firstAddress, originalHeaders, parseFieldBlocks } from './text.ts';

const DAEMON = /^(mailer-daemon|postmaster|mail-daemon|mailerdaemon|maildaemon|mdaemon)(@|$)/i;
const A = ADDRESS.source;
// "<addr>:" (qmail), "<addr>: host … said:" (Postfix), "addr:" (Exim), "name <addr>: malformed
// address" (Exim): a line that opens with the address and a colon.
const LEADING = new RegExp(`^[ \\t]*(?:<?(${A})>?|[^\\s<>:]+[ \\t]+<(${A})>):(?:[ \\t]|$)`, 'm');
// A transcript's "RCPT TO:<addr>" (Postfix to the postmaster, Apache James).
const RCPT_TO = new RegExp(`\\bRCPT TO:[ \\t]*<?(${A})`, 'i');
// "…did not reach the following recipient(s):", "The following address(es) failed:".
const LIST_HEAD = /\bfollowing (recipients?|addresses|recipient\(s\)|address\(es\))[^\n]*\n/i;

/** The failed recipient a non-standard report names; `own` are the report's own From and To. */
export function failedRecipientIn(mail: ParsedMail, rawText: string, explanation: string, own: ReadonlySet<string | null>): string | null {
  const found = namedRecipient(mail, rawText, explanation, own);
  return found ? (expandedFrom(explanation, found) ?? found) : null;
}

function namedRecipient(mail: ParsedMail, rawText: string, explanation: string, own: ReadonlySet<string | null>): string | null {
  const leading = LEADING.exec(explanation);
  if (leading) return (leading[1] ?? leading[2]).toLowerCase();
  const rcpt = RCPT_TO.exec(explanation)?.[1];
  if (rcpt) return rcpt.toLowerCase();
  const list = LIST_HEAD.exec(explanation);
  if (list) {
    // The list's first line (Exim lists bare local parts too: then the lines after it are no list).
    const after = explanation
      .slice(list.index + list[0].length)
      .split('\n')
      .find((line) => line.trim() !== '');
    const address = after ? (new RegExp(`<(${A})>`).exec(after)?.[1] ?? ADDRESS.exec(after)?.[0]) : undefined;
    if (address && !DAEMON.test(address)) return address.toLowerCase();
    // AOL names its own users without the domain.
    const local = /^[ \t]*([A-Za-z0-9._+-]{1,64})[ \t]*$/.exec(after ?? '')?.[1];
    if (local && /@aol\.com$/i.test(firstAddress(mail.from) ?? '')) return `${local.toLowerCase()}@aol.com`;
  }
  const failedHeader = mail.headers.get('x-failed-recipients');
  const header = addressField(typeof failedHeader === 'string' ? failedHeader : undefined);
  if (header) return header;
  // The first address that is not the report's own; a postmaster@ only when nothing else is named.
  const named = [...explanation.matchAll(new RegExp(A, 'g'))].map((m) => m[0].toLowerCase()).filter((a) => !own.has(a));
  const address = named.find((a) => !DAEMON.test(a)) ?? named[0];
  return address ?? returnedRecipient(mail, rawText);
}

/** Sendmail's "(expanded from: <addr>)" under an alias's target: the address that was sent to. */
function expandedFrom(explanation: string, address: string): string | null {
  const at = explanation.toLowerCase().indexOf(address);
  if (at < 0) return null;
  const near = explanation.slice(at + address.length, at + address.length + 400);
  return addressField(new RegExp(`^[^\\n]*(?:\\n[^\\n]*){0,3}?\\(expanded from:?\\s*<?(${A})`, 'i').exec(near)?.[1]);
}

/** The returned message's only To address (a report that names nobody else is about it). */
export function returnedRecipient(mail: ParsedMail, rawText: string): string | null {
  const headers = originalHeaders(mail, rawText);
  const to = headers ? parseFieldBlocks(headers)[0]?.get('to') : undefined;
  if (!to || (to.match(new RegExp(A, 'g')) ?? []).length !== 1) return null;
  return addressField(to);
}
