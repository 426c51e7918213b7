// The delivery rules of https://emailit.com/docs/webhooks/retries-and-failures.md as pure
// functions: batch size, the retry schedule, when a webhook is disabled, what counts as success,
// and the request signature.
import { randomBytes } from 'node:crypto';
import { hmacSha256 } from '../../platform/hmac.ts';

export const BATCH_SIZE = 100;
export const REQUEST_TIMEOUT_MS = 30_000;
export const MAX_ATTEMPTS = 11;
/** A webhook with no successful delivery for this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 3600_000;
/** A request can be resent by hand for this long after it was created. */
export const RESEND_WINDOW_MS = 7 * 24 * 3600_000;
/** How much of an endpoint's answer is kept with an attempt. */
export const RESPONSE_EXCERPT_CHARS = 2000;
export const USER_AGENT = 'Emailit-Webhooks/2.0';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Wait after attempt n (index n-1) before attempt n+1: 5 min, 30 min, 2 h, 5 h, then 12 h. */
export const RETRY_WAITS_MS: readonly number[] = [
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
];

/** Milliseconds to wait after `attemptsMade` failed attempts, or null when none is left. */
export function retryDelayMs(attemptsMade: number): number | null {
  if (attemptsMade < 1 || attemptsMade >= MAX_ATTEMPTS) return null;
  return RETRY_WAITS_MS[attemptsMade - 1];
}

/** Time from the first attempt to attempt `n` (1-based) on the schedule. */
export function offsetOfAttemptMs(n: number): number {
  return RETRY_WAITS_MS.slice(0, Math.max(0, n - 1)).reduce((sum, wait) => sum + wait, 0);
}

export function isSuccessStatus(status: number): boolean {
  return status >= 200 && status <= 299;
}

/** True when a webhook failing since `failingSince` (epoch ms) has gone too long without success. */
export function shouldDisable(failingSince: number | null, now: number): boolean {
  return failingSince !== null && now - failingSince >= DISABLE_AFTER_MS;
}

/**
 * Pause before new batches go to an endpoint that just failed (retries keep their schedule):
 * 1 s after one failure, doubling, at most 60 s, so an endpoint that is down is not hammered.
 */
export function failureBackoffMs(consecutiveFailures: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.max(0, consecutiveFailures - 1));
}

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}

/** Lowercase hex HMAC-SHA256 of `{timestamp}.{raw body}`, keyed with the whole secret. */
export function signPayload(secret: string, timestamp: number, body: string): string {
  return hmacSha256(secret, `${timestamp}.${body}`).toString('hex');
}

/** The headers of one delivery attempt (signed afresh at every attempt). */
export function deliveryHeaders(secret: string, body: string, nowSeconds: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-emailit-timestamp': String(nowSeconds),
    'x-emailit-signature': signPayload(secret, nowSeconds, body),
  };
}

/** One batch item, built from the stored event JSON without re-serialising it. */
export function batchItem(eventId: string, type: string, objectJson: string): string {
  return `{"event_id":${JSON.stringify(eventId)},"type":${JSON.stringify(type)},"object":${objectJson},"data":{"object":${objectJson}}}`;
}

export function batchBody(items: string[]): string {
  return `[${items.join(',')}]`;
}
