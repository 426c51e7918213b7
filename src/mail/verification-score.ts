// Score, risk and result of an email verification from its checks
// (https://emailit.com/docs/api-reference/email-verifications.md). The result is the first of the
// documented table that applies; the score and the risk are Postlane's own rules (the public
// documentation gives no formula), written out in the README.

export interface VerificationChecks {
  valid_syntax: boolean;
  disposable: boolean;
  role_account: boolean;
  free_email: boolean;
  gibberish: boolean;
  /** null: DNS could not be asked (the verification failed). */
  has_mx_records: boolean | null;
  /** Days since the domain was registered; null when unknown (no RDAP_URL, no record). */
  domain_age: number | null;
  // Mailbox checks: null in `fast` mode, and in `full` mode when the server gave no answer.
  smtp_connect: boolean | null;
  deliverable: boolean | null;
  inbox_full: boolean | null;
  disabled: boolean | null;
  catch_all: boolean | null;
}

export type VerificationResult = 'invalid' | 'disposable' | 'disabled' | 'inbox_full' | 'role' | 'safe' | 'unknown';
export type VerificationRisk = 'low' | 'medium' | 'high';

export const VERIFICATION_RESULTS: readonly VerificationResult[] = [
  'invalid',
  'disposable',
  'disabled',
  'inbox_full',
  'role',
  'safe',
  'unknown',
];

/** What each signal takes off the 100 an address starts with. */
export const SCORE_DEDUCTIONS = {
  disposable: 50,
  role_account: 20,
  free_email: 10,
  gibberish: 25,
  /** Registered less than NEW_DOMAIN_DAYS ago. */
  new_domain: 20,
  /** DNS did not answer, so the domain's mail hosts are unknown. */
  dns_failed: 35,
  /** The mailbox server refused the address, or said it is disabled: nothing can be delivered. */
  undeliverable: 100,
  inbox_full: 50,
  /** The domain accepts any address, so this one is not confirmed. */
  catch_all: 35,
  /** `full` mode without an answer about the mailbox: no connection, a timeout, greylisting. */
  no_mailbox_answer: 35,
} as const;

export const NEW_DOMAIN_DAYS = 30;
export const SAFE_SCORE = 70;
const HIGH_RISK_BELOW = 40;

/** 0–100; 0 for an address that cannot receive mail (bad syntax, no MX). */
export function verificationScore(checks: VerificationChecks, mode: 'fast' | 'full'): number {
  if (!checks.valid_syntax || checks.has_mx_records === false) return 0;
  const d = SCORE_DEDUCTIONS;
  let score = 100;
  if (checks.disposable) score -= d.disposable;
  if (checks.role_account) score -= d.role_account;
  if (checks.free_email) score -= d.free_email;
  if (checks.gibberish) score -= d.gibberish;
  if (checks.domain_age !== null && checks.domain_age < NEW_DOMAIN_DAYS) score -= d.new_domain;
  if (checks.has_mx_records === null) score -= d.dns_failed;
  if (mode === 'full' && checks.has_mx_records) {
    if (checks.deliverable === false && !checks.inbox_full) score -= d.undeliverable;
    else if (checks.inbox_full) score -= d.inbox_full;
    else if (checks.deliverable === null) score -= d.no_mailbox_answer;
    if (checks.catch_all) score -= d.catch_all;
  }
  return Math.max(0, Math.min(100, score));
}

/** The first result of the documented table that applies. */
export function verificationResult(checks: VerificationChecks, score: number): VerificationResult {
  if (!checks.valid_syntax || checks.has_mx_records === false) return 'invalid';
  if (checks.disposable) return 'disposable';
  if (checks.disabled) return 'disabled';
  if (checks.inbox_full) return 'inbox_full';
  if (checks.role_account) return 'role';
  return score >= SAFE_SCORE ? 'safe' : 'unknown';
}

/**
 * `high` for addresses mail cannot reach or should not go to (invalid, disposable, disabled)
 * and scores under 40; `medium` for full mailboxes, role accounts and scores under 70; else `low`.
 */
export function verificationRisk(result: VerificationResult, score: number): VerificationRisk {
  if (result === 'invalid' || result === 'disposable' || result === 'disabled' || score < HIGH_RISK_BELOW) return 'high';
  if (result === 'inbox_full' || result === 'role' || score < SAFE_SCORE) return 'medium';
  return 'low';
}
