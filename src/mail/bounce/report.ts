// What the bounce reader hands back (re-exported by bounces.ts).
import type { BounceReason } from '../bounce-reasons.ts';

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
  /** The returned message's envelope sender (ARF Original-Mail-From, else its Return-Path): a VERP address ties the report to its email. */
  originalSender: string | null;
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

export function empty(kind: BounceKind = 'unknown'): BounceReport {
  return {
    kind,
    recipient: null,
    status: null,
    diagnostic: null,
    originalMessageId: null,
    originalSender: null,
    hard: false,
    feedbackType: null,
    source: null,
    recipients: [],
    reason: null,
  };
}
