// Reasons, not just codes (docs/delivery.md): every DSN, ARF report, synchronous SMTP rejection and
// auto-reply maps to ONE documented reason (BOUNCE_REASONS) with hard/soft. `aboutRecipient`
// is the only thing that may justify a `bounce` suppression; reasons about the sender
// (reputation, policy, rate, content) are blocks: retried, never suppressed.
//
// The wording lists in bounce-phrases.json (what receivers of many vendors write for each
// reason) and the status-code table are data taken from Sisimai (https://github.com/sisimai,
// BSD 2-Clause, (C) azumakuniyuki), mapped onto our coarser reasons below; the order in which
// reasons are tried follows Sisimai's too, so that a 550 that talks about a blocked IP is a
// block and not an unknown user.
import phrases from './bounce-phrases.json' with { type: 'json' };
import { agentSaysUnknown } from './bounce/agents.ts';
import { receiverReason } from './bounce/receivers.ts';

export const BOUNCE_REASONS = {
  user_unknown: { hard: true, aboutRecipient: true, description: 'The mailbox does not exist (or moved without a forwarding address).' },
  suspended: { hard: true, aboutRecipient: true, description: 'The mailbox exists but is disabled, suspended or inactive.' },
  host_unknown: {
    hard: true,
    aboutRecipient: true,
    description: 'The recipient domain does not exist or accepts no mail (NXDOMAIN, null MX).',
  },
  mailbox_full: { hard: false, aboutRecipient: true, description: 'The mailbox is over its quota.' },
  filtered: {
    hard: false,
    aboutRecipient: true,
    description: "Refused by the recipient's own filter or settings (not a reason to suppress).",
  },
  message_too_large: { hard: true, aboutRecipient: false, description: 'The message exceeds a size limit of the receiver.' },
  content_spam: { hard: false, aboutRecipient: false, description: 'The content was rejected as spam, a virus or otherwise unacceptable.' },
  policy_block: {
    hard: false,
    aboutRecipient: false,
    description: 'Refused by policy about the sender: SPF/DKIM/DMARC, PTR, relaying, RFC compliance.',
  },
  reputation_block: {
    hard: false,
    aboutRecipient: false,
    description: "Refused because of the sending IP's or domain's reputation or a blocklist.",
  },
  rate_limited: { hard: false, aboutRecipient: false, description: 'The receiver throttles us: too many connections or messages.' },
  expired: { hard: false, aboutRecipient: false, description: 'Not delivered before the retry window ended.' },
  network_error: { hard: false, aboutRecipient: false, description: 'The receiving host could not be reached or routed to.' },
  system_error: {
    hard: false,
    aboutRecipient: false,
    description: "A fault on the receiver's side (disk full, misconfiguration, mailer error).",
  },
  auto_reply: { hard: false, aboutRecipient: false, description: 'A vacation notice or other auto-reply: never a bounce.' },
  complaint: { hard: false, aboutRecipient: true, description: 'A feedback-loop (ARF) spam complaint: adds a `complaint` suppression.' },
  unknown: { hard: false, aboutRecipient: false, description: 'Not recognised; kept with its code and text.' },
} as const;

export type BounceReason = keyof typeof BOUNCE_REASONS;
export const BOUNCE_REASON_NAMES = Object.keys(BOUNCE_REASONS) as BounceReason[];

export type ReasonResult = { reason: BounceReason; hard: boolean; aboutRecipient: boolean };

// Sisimai's finer reasons → ours.
const FROM_SISIMAI: Record<string, BounceReason> = {
  userunknown: 'user_unknown',
  hasmoved: 'user_unknown',
  suspend: 'suspended',
  hostunknown: 'host_unknown',
  notaccept: 'host_unknown',
  mailboxfull: 'mailbox_full',
  filtered: 'filtered',
  mesgtoobig: 'message_too_large',
  exceedlimit: 'message_too_large',
  spamdetected: 'content_spam',
  virusdetected: 'content_spam',
  contenterror: 'content_spam',
  policyviolation: 'policy_block',
  authfailure: 'policy_block',
  requireptr: 'policy_block',
  notcompliantrfc: 'policy_block',
  norelaying: 'policy_block',
  securityerror: 'policy_block',
  rejected: 'policy_block',
  blocked: 'reputation_block',
  badreputation: 'reputation_block',
  toomanyconn: 'rate_limited',
  speeding: 'rate_limited',
  expired: 'expired',
  networkerror: 'network_error',
  systemerror: 'system_error',
  systemfull: 'system_error',
  mailererror: 'system_error',
  syntaxerror: 'system_error',
  vacation: 'auto_reply',
  feedback: 'complaint',
  undefined: 'unknown',
  onhold: 'unknown',
  delivered: 'unknown',
};

/** One of our reasons for a Sisimai reason name (used by the fixture test and kept documented). */
export function fromSisimaiReason(name: string): BounceReason {
  return FROM_SISIMAI[name] ?? 'unknown';
}

type PhraseSet = { index?: string[]; pairs?: string[][]; isnot?: string[] };
const PHRASES = phrases.reasons as Record<string, PhraseSet>;
const STATUS_NAMES = phrases.status as Record<string, string>;

// Our own wordings, tried before Sisimai's lists: reputation words that a 550 often carries
// (docs/delivery.md, "Blocks are not bounces") and throttling replies.
const OWN: Array<[string, RegExp]> = [
  // Yahoo's TSS04 deferrals are about complaints and reputation, not only volume.
  ['badreputation', /\[ts0[1-4]\]|\[tss0\d\]|due to (unexpected volume or )?user complaints/i],
  [
    'suspend',
    /account is disabled|account has been disabled|mailbox (is )?disabled|account (is |has been )?suspended|temporar(y|ily) locked/i,
  ],
  [
    'networkerror',
    /dns query failed|malformed or unexpected name server reply|wasn't able to establish an smtp connection|lost connection with .{1,200} while (performing|sending|receiving)/i,
  ],
  ['expired', /message expired, connection refused/i],
  ['speeding', /receiving mail at a rate that/i],
  [
    'speeding',
    /rate limit|too many (messages|connections|recipients|mails)|throttl|temporarily deferred|4\.7\.28|exceeded .*(rate|limit)/i,
  ],
  // Reputation, and the blocklists by name: a block even beside a 5.1.x status.
  ['badreputation', /reputation|poor sender|spamhaus|barracuda|spamcop|\bRBL\b|\bDNSBL\b/i],
];

// "Blacklisted" alone, tried once Sisimai's lists have had their say (they tell a blocklisted
// URL in the content or a blocklisted sender address from a blocked IP).
const REPUTATION_WORDS = /block ?list|blacklist/i;

// Vendor wordings that Sisimai reads in its per-MTA modules rather than its reason lists
// (facts about what Exim, Gmail, Domino, Notes, IMail, DragonFly, OpenSMTPD, Google Groups…
// write), tried after the reason lists.
const VENDOR: Array<[string, RegExp]> = [
  [
    'expired',
    /retry timeout exceeded|could not deliver for the last \d+ seconds|did not accept our requests to connect|envelope expired|delivery failed \d+ attempts|was not delivered within \d+ days|remote host is not responding|maximum time in queue|too long in queue/,
  ],
  [
    'userunknown',
    /not listed in (domino directory|public name & address book)|invalid final delivery userid|unable to deliver message to <[^>]+> \(and other recipients|ディレクトリのリストにありません|no mailbox here by that name|user unknown|unknown user|no such (user|mailbox|recipient)/,
  ],
  ['hostunknown', /dns lookup failure: host|host .{1,80} not found|domain .{1,80} (not found|does not exist)/],
  ['notaccept', /indicated no smtp service|does not accept mail \(null mx\)/],
  ['mailboxfull', /user mailbox exceeds allowed size|mailbox (is )?full|over ?quota/],
  ['rejected', /groups\.google\.com\/support|not have permission to post/],
  ['systemerror', /malformed address|does not support tls/],
  ['securityerror', /smtp authentication|authentication required/],
  ['syntaxerror', /command parameter not implemented|syntax error in parameters/],
];

/** Ordered "aligned" search: every part appears, each after the previous one (Sisimai::String->aligned). */
function aligned(text: string, parts: string[]): boolean {
  let from = 0;
  for (const part of parts) {
    const at = text.indexOf(part, from);
    if (at < 0) return false;
    from = at + part.length;
  }
  return parts.length > 0;
}

function matches(name: string, text: string): boolean {
  const set = PHRASES[name];
  if (!set) return false;
  if (set.isnot?.some((p) => text.includes(p))) return false;
  if (set.index?.some((p) => text.includes(p))) return true;
  return set.pairs?.some((parts) => aligned(text, parts)) ?? false;
}

// Sisimai::Reason's orders: first pass (status or wording), second pass (wording only).
const FIRST = [
  'mailboxfull',
  'mesgtoobig',
  'exceedlimit',
  'suspend',
  'hasmoved',
  'norelaying',
  'authfailure',
  'userunknown',
  'filtered',
  'requireptr',
  'notcompliantrfc',
  'badreputation',
  'rejected',
  'hostunknown',
  'spamdetected',
  'speeding',
  'toomanyconn',
  'blocked',
];
const SECOND = [
  'mailboxfull',
  'authfailure',
  'badreputation',
  'speeding',
  'spamdetected',
  'virusdetected',
  'policyviolation',
  'norelaying',
  'systemerror',
  'networkerror',
  'suspend',
  'contenterror',
  'systemfull',
  'notaccept',
  'expired',
  'securityerror',
  'mailererror',
];
// Status names that only say "try the wording" (Sisimai's retry set).
const VAGUE = new Set([
  'undefined',
  'onhold',
  'systemerror',
  'securityerror',
  'expired',
  'suspend',
  'networkerror',
  'hostunknown',
  'userunknown',
]);

const ENHANCED = /(?<![\w.])([245])\.(\d{1,3})\.(\d{1,3})(?![\w]|\.\d)/;

type ReasonInput = {
  status?: string | null;
  diagnostic?: string | null;
  action?: string | null;
  /** The report's human-readable part: read when the diagnostic says nothing, and for the SMTP stage. */
  context?: string | null;
  /** The SMTP command that was answered (RCPT, DATA, MAIL…), when known. */
  command?: string | null;
  /** The text comes from a bounce report: an unstated command is not taken as RCPT. */
  report?: boolean;
  /** The receiving host (Remote-MTA or MX), for receivers with codes of their own. */
  host?: string | null;
  /** The Diagnostic-Code's type (smtp, x-unix, x-postfix…), when a DSN gives it. */
  diagnosticType?: string | null;
  /** What the product that wrote the report means by it (a Sisimai reason name, bounce/reporters.ts). */
  reporter?: string | null;
};

// Wordings that only a recipient lookup produces (Exchange/Office 365 directory lookups,
// "mailbox unavailable"), whatever the command.
const RECIPIENT_NOT_FOUND = /recipientnotfound|recipient not found|unknown recipient|mailbox unavailable|resolver\.adr\./;

/** The SMTP command a report says was answered, from its wording (null when it does not say). */
export function commandIn(text: string, bare = true): string | null {
  // Transcripts and MTA wordings: ">>> RCPT TO:<…>", "in reply to RCPT TO command", "after RCPT TO:".
  // Microsoft relays the remote answer after "->"; one that names the address answered RCPT TO.
  if (/unknown recipient or mailbox unavailable ->[^\n]*@/i.test(text)) return 'RCPT';
  // Yahoo's "[RCPT_TO]" line, "SMTP:RCPT host …".
  if (/\[RCPT_TO\]|SMTP:RCPT host/.test(text)) return 'RCPT';
  // qmail says what it was doing in words.
  if (/ but greeting failed\./.test(text)) return 'CONN';
  if (/ but my name was rejected\./.test(text)) return 'EHLO';
  if (/ but sender was rejected\./.test(text)) return 'MAIL';
  const stated =
    /(?:>>>|in reply to(?: the)?|after(?: the)?|error in|did not like our|most progress was|said \d{3} for)\s+(HELO|EHLO|STARTTLS|AUTH|MAIL(?: FROM)?|RCPT(?: TO)?|DATA|end of data|QUIT|XFORWARD)\b/gi;
  let last: string | null = null;
  for (const match of text.matchAll(stated)) last = match[1];
  if (!last && bare) {
    // A bare command word in the diagnostic itself ("RCPT TO:<…> 550 …"), upper case only; not in
    // an explanation, which may list the envelope ("RCPT TO: …") without saying what failed.
    const bare = /\b(HELO|EHLO|STARTTLS|MAIL FROM|RCPT TO|DATA)\b/g;
    for (const match of text.matchAll(bare)) last = match[1];
  }
  if (!last) return null;
  const word = last.toUpperCase();
  if (word === 'END OF DATA') return 'DATA';
  return word.split(' ')[0];
}

// Sisimai reasons that mean "this address is dead" (user_unknown, suspended, host_unknown).
const SUPPRESSING = new Set(['userunknown', 'hasmoved', 'suspend', 'hostunknown', 'notaccept']);

function sisimaiName(given: ReasonInput): string {
  // "RCPT TO", "MAIL FROM" (as an SMTP client names them) → RCPT, MAIL.
  const command =
    (given.command || commandIn(given.diagnostic ?? '') || (given.report ? commandIn(given.context ?? '', false) : null))
      ?.toUpperCase()
      .split(' ')[0] ?? null;
  const input = { ...given, command };
  const status = ENHANCED.exec(given.status ?? '')?.[0] ?? ENHANCED.exec(given.diagnostic ?? '')?.[0] ?? '';
  const byReceiver = receiverReason({ host: given.host ?? '', diagnostic: given.diagnostic ?? '', status, command: command ?? '' });
  if (byReceiver) return byReceiver;
  // The reporting product's own reading is final unless it only says "held" or "undefined".
  if (given.reporter && given.reporter !== 'onhold' && given.reporter !== 'undefined') return given.reporter;
  // A local delivery agent's "unknown user" is the mailbox's: no SMTP command, no filter.
  if (agentSaysUnknown((given.diagnostic ?? '').toLowerCase()) || (given.report && agentSaysUnknown((given.context ?? '').toLowerCase())))
    return 'userunknown';
  const name = sisimaiNameOf(input, (input.diagnostic ?? '').toLowerCase().replace(/\s+/g, ' '));
  if (!input.context) return name;
  // A status alone (expired, onhold…) says less than the report's own words around it; so does
  // a "system error" or "security error" that only the status code gave.
  const onlyStatus = (name === 'systemerror' || name === 'securityerror') && STATUS_NAMES[status] === name;
  if (name !== 'undefined' && name !== 'onhold' && !onlyStatus && (!VAGUE.has(name) || (input.diagnostic ?? '').trim().length > 0))
    return name;
  const fromContext = sisimaiNameOf(input, input.context.toLowerCase().replace(/\s+/g, ' '));
  if (fromContext === 'undefined' || fromContext === 'onhold') return name;
  // The receiver's own words about this recipient said nothing we know; an explanation that is
  // about several recipients never makes a dead address of this one.
  const addresses = new Set(input.context.toLowerCase().match(/[\w.+-]{1,64}@[\w.-]{1,253}\.[a-z]{2,63}/g) ?? []);
  if ((input.diagnostic ?? '').trim() && addresses.size > 1 && SUPPRESSING.has(fromContext)) return name;
  return fromContext;
}

// Wordings that, beside a 5.1.1 status, say the refusal was about something else.
const NOT_THE_RECIPIENT = ['norelaying', 'blocked', 'mailboxfull', 'hasmoved', 'rejected', 'notaccept'];
const BEFORE_DATA = new Set(['CONN', 'HELO', 'EHLO', 'MAIL', 'RCPT', 'STARTTLS', 'AUTH']);

/**
 * "User unknown" is the recipient's when the status says so (x.1.1) or when it answered RCPT TO;
 * after DATA (the recipient had been accepted) it is the recipient's filter. A report that does
 * not say which command was answered is read the way Sisimai does, as the filter: receivers such
 * as docomo and au answer their users' filters with "Unknown user", and suppressing a real
 * customer is the mistake a careful postmaster avoids. Our own deliveries know
 * the command; a caller that does not (and is no report) is taken as RCPT.
 */
function recipientOrFilter(name: 'userunknown' | 'filtered', byStatus: string, text: string, input: ReasonInput): string | null {
  const command = input.command?.toUpperCase().split(' ')[0] || (input.report ? '' : 'RCPT');
  if (name === 'userunknown') {
    if (/recipientnotfound|recipient not found by smtp address lookup/.test(text)) return 'userunknown';
    if (byStatus === 'userunknown') return NOT_THE_RECIPIENT.some((other) => matches(other, text)) ? null : 'userunknown';
    if (byStatus === 'suspend') return null;
    if (command === 'RCPT' && (matches('userunknown', text) || (!input.report && RECIPIENT_NOT_FOUND.test(text)))) return 'userunknown';
    return null;
  }
  if (byStatus === 'suspend') return null;
  if (byStatus === 'filtered') return matches('userunknown', text) || matches('filtered', text) ? 'filtered' : null;
  if (BEFORE_DATA.has(command)) return null;
  return matches('filtered', text) || matches('userunknown', text) ? 'filtered' : null;
}

/**
 * Wordings about the sender ("address rejected", "sender rejected") count when MAIL FROM was
 * answered, after DATA unless the status says the recipient is unknown, or when the status says
 * nothing precise; beside a recipient's status at RCPT they are about the recipient.
 */
function rejectedBySender(byStatus: string, text: string, input: ReasonInput): boolean {
  const command = input.command?.toUpperCase().split(' ')[0] ?? '';
  if (command === 'MAIL') return matches('rejected', text);
  if (command === 'DATA') return byStatus !== 'userunknown' && matches('rejected', text);
  if (['', 'undefined', 'onhold', 'securityerror', 'systemerror'].includes(byStatus)) return matches('rejected', text);
  return false;
}

function sisimaiNameOf(input: ReasonInput, text: string): string {
  const status = ENHANCED.exec(input.status ?? '')?.[0] ?? ENHANCED.exec(text)?.[0] ?? '';
  if (status.startsWith('2.')) return 'delivered';
  const byStatus = STATUS_NAMES[status] ?? '';
  // The status says the retry window ended and the words agree ("could not be delivered for 5 days").
  if (byStatus === 'expired' && matches('expired', text)) return 'expired';
  if (!/grey ?list|gray ?list/.test(text)) {
    for (const [name, pattern] of OWN) if (pattern.test(text)) return name;
    // "Try again later" from a receiver we are talking to asks us to slow down; in a report it is
    // a throttle only beside a 421 or a 4.7.x (elsewhere it says the failure is temporary: a full
    // disk, a recipient error).
    if (/try again later/.test(text) && (!input.report || /^4\.7\./.test(status) || /(?<!\d)421(?!\d)/.test(text))) return 'speeding';
  }
  // An X-Unix Diagnostic-Code is a local mailer's exit, no SMTP reply.
  const smtp = !/^x-unix/i.test(input.diagnosticType ?? '');
  if (smtp)
    for (const name of FIRST) {
      if (name === 'userunknown' || name === 'filtered') {
        const found = recipientOrFilter(name, byStatus, text, input);
        if (found) return found;
        continue;
      }
      if (name === 'rejected') {
        if (byStatus === 'rejected' || rejectedBySender(byStatus, text, input)) return name;
        continue;
      }
      if (byStatus === name || matches(name, text)) return name;
    }
  if (REPUTATION_WORDS.test(text)) return 'badreputation';
  for (const name of SECOND) if (matches(name, text)) return name;
  // "User unknown" answered before RCPT TO (at MAIL FROM: our sender) is not about the recipient.
  const beforeRcpt = /^(CONN|EHLO|HELO|MAIL)$/.test(input.command ?? '');
  for (const [name, pattern] of VENDOR) if (pattern.test(text) && !(name === 'userunknown' && beforeRcpt)) return name;
  if (byStatus && !VAGUE.has(byStatus)) return byStatus;
  const klass = status.slice(2, 4);
  if (klass === '6.') return 'contenterror';
  if (klass === '7.') return 'securityerror';
  if (/^x-unix/i.test(input.diagnosticType ?? '')) return 'mailererror';
  // Refused before any recipient was named: about the sending host.
  if (/^(CONN|EHLO|HELO)$/.test(input.command ?? '')) return 'blocked';
  // 501-507: the receiver did not understand what it was sent.
  const reply = Number(/^\s*([45]\d\d)\b/.exec(input.diagnostic ?? '')?.[1] ?? 0);
  if ((reply > 400 && reply < 408) || (reply > 500 && reply < 508)) return 'syntaxerror';
  if (byStatus) return byStatus;
  if (/^(delayed|expired)/i.test(input.action ?? '')) return 'expired';
  if (matches('vacation', text)) return 'vacation';
  return 'undefined';
}

/** Classifies one rejection. `status` is the enhanced code (5.1.1) or the basic one (550). */
export function classifyReason(input: ReasonInput): ReasonResult {
  const status = input.status ?? '';
  const reason = fromSisimaiReason(sisimaiName(input));
  const entry = BOUNCE_REASONS[reason];
  // A 4xx never counts as hard, whatever the words say; neither does an unknown reason.
  const permanent = status.startsWith('5') || (!status && /^failed/i.test(input.action ?? ''));
  return { reason, hard: entry.hard && permanent, aboutRecipient: entry.aboutRecipient };
}

const autoReplyPattern =
  /out of (the )?office|auto(matic)?[- ]?(reply|response|antwort)|vacation|away from (my|the) (desk|office)|abwesenheit|absence|r[ée]ponse automatique|on (holiday|leave)/i;

/** True for vacation notices and other auto-replies, which never count as bounces. */
export function isAutoReply(headers: { subject?: string; autoSubmitted?: string; xAutoreply?: string }): boolean {
  if (headers.autoSubmitted && /auto-replied/i.test(headers.autoSubmitted)) return true;
  if (headers.xAutoreply) return true;
  return autoReplyPattern.test(headers.subject ?? '');
}

/** Only reasons about the recipient, and only hard ones, may add a `bounce` suppression. */
export function suppressesRecipient(result: ReasonResult): boolean {
  return result.hard && result.aboutRecipient && result.reason !== 'complaint';
}

/** Reasons about the sender that a receiver answers with 5xx but that deserve a later retry. */
export function isSenderBlock(reason: BounceReason): boolean {
  return reason === 'reputation_block' || reason === 'policy_block' || reason === 'rate_limited';
}

/** Throttling answers: the destination wants us slower (traffic shaping backs off). */
export function isThrottle(reason: BounceReason): boolean {
  return reason === 'rate_limited';
}
