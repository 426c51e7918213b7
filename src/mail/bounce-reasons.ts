// Reasons, not just codes (issue 19): maps an SMTP reply or DSN status + diagnostic text to one
// documented reason. `aboutRecipient` is the only thing that may justify a `bounce` suppression;
// reasons about the sender (reputation, policy, rate) are blocks: retried, never suppressed.

export type BounceReason =
  | 'user_unknown' | 'mailbox_disabled' | 'mailbox_full' | 'message_too_large' | 'content_spam'
  | 'policy_block' | 'reputation_block' | 'rate_limited' | 'host_unknown' | 'expired'
  | 'auto_reply' | 'complaint' | 'unknown';

export type ReasonResult = { reason: BounceReason; hard: boolean; aboutRecipient: boolean };

type Rule = { reason: BounceReason; pattern: RegExp; hard: boolean; aboutRecipient: boolean };

// Text rules first (receivers often answer 550 for a block), ordered so sender-side blocks win
// over the generic "rejected" wording of recipient rules.
const textRules: Rule[] = [
  { reason: 'rate_limited', hard: false, aboutRecipient: false, pattern: /rate limit|too many (messages|connections|recipients)|try again later|throttl|temporarily deferred|4\.7\.28/i },
  { reason: 'reputation_block', hard: false, aboutRecipient: false, pattern: /reputation|blocklist|blacklist|block ?list|spamhaus|barracuda|spamcop|\bblocked\b|\bRBL\b|\bDNSBL\b|listed at|poor sender/i },
  { reason: 'policy_block', hard: false, aboutRecipient: false, pattern: /\bpolicy\b|\bSPF\b|\bDKIM\b|\bDMARC\b|not authori[sz]ed|relay(ing)? (denied|not permitted|access denied)|5\.7\.(23|25|26)\b/i },
  { reason: 'content_spam', hard: false, aboutRecipient: false, pattern: /\bspam\b|content rejected|message content|virus|malware/i },
  { reason: 'message_too_large', hard: true, aboutRecipient: false, pattern: /too (large|big)|size limit|exceeds.*size|5\.3\.4|5\.2\.3/i },
  { reason: 'mailbox_full', hard: false, aboutRecipient: true, pattern: /mailbox (is )?full|over ?quota|quota exceeded|insufficient (disk )?space|5\.2\.2|4\.2\.2/i },
  { reason: 'mailbox_disabled', hard: true, aboutRecipient: true, pattern: /disabled|inactive|suspended|deactivated|no longer (active|in use)|account (has been )?(closed|expired)|5\.2\.1/i },
  { reason: 'user_unknown', hard: true, aboutRecipient: true, pattern: /user (unknown|not found|doesn'?t exist)|unknown (user|recipient)|no such (user|mailbox|recipient)|does not exist|recipient (address )?rejected|invalid (mailbox|recipient)|address rejected|mailbox unavailable|not a valid mailbox|5\.1\.1|5\.1\.0|5\.1\.10/i },
  { reason: 'host_unknown', hard: true, aboutRecipient: true, pattern: /host (not found|unknown)|domain (not found|does not exist)|no mx|NXDOMAIN|5\.1\.2|5\.4\.4/i },
  { reason: 'expired', hard: false, aboutRecipient: false, pattern: /expired|retry timeout|could not be delivered within|4\.4\.7/i },
];

const autoReplyPattern = /out of (the )?office|auto(matic)?[- ]?(reply|response)|vacation|away from (my|the) (desk|office)|abwesenheit/i;

/** Classifies one rejection. `status` is the enhanced code (5.1.1) or the basic one (550). */
export function classifyReason(input: { status?: string | null; diagnostic?: string | null }): ReasonResult {
  const status = input.status ?? '';
  const text = `${status} ${input.diagnostic ?? ''}`;
  for (const rule of textRules) {
    if (rule.pattern.test(text)) {
      // A 4xx never counts as hard, whatever the words say.
      const permanent = status.startsWith('5');
      return { reason: rule.reason, hard: rule.hard && permanent, aboutRecipient: rule.aboutRecipient };
    }
  }
  return { reason: 'unknown', hard: status.startsWith('5'), aboutRecipient: false };
}

/** True for vacation notices and other auto-replies, which never count as bounces. */
export function isAutoReply(headers: { subject?: string; autoSubmitted?: string; xAutoreply?: string }): boolean {
  if (headers.autoSubmitted && /auto-replied|auto-generated/i.test(headers.autoSubmitted)) return true;
  if (headers.xAutoreply) return true;
  return autoReplyPattern.test(headers.subject ?? '');
}

/** Only reasons about the recipient, and only hard ones, may add a `bounce` suppression. */
export function suppressesRecipient(result: ReasonResult): boolean {
  return result.hard && result.aboutRecipient;
}

/** Reasons about the sender that a receiver answers with 5xx but that deserve a later retry. */
export function isSenderBlock(reason: BounceReason): boolean {
  return reason === 'reputation_block' || reason === 'policy_block' || reason === 'rate_limited';
}
