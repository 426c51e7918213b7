// SMTP replies of the two listeners. smtp-server is run without its automatic enhanced status
// codes (they cannot be chosen per handler error), so every reply written here carries its
// own RFC 3463 code in the text: `452 4.4.5 Messages per second limit exceeded`.
import { ApiError } from '../platform/http/errors.ts';
import type { SendLimitRefusal } from '../platform/limits.ts';
import { MAX_MESSAGE_BYTES } from '../resources/emails/content.ts';

export type SmtpError = Error & { responseCode: number };

export function smtpError(code: number, text: string): SmtpError {
  return Object.assign(new Error(text), { responseCode: code });
}

export const replies = {
  authFailed: () => smtpError(535, '5.7.8 Authentication failed'),
  authUnavailable: () => smtpError(454, '4.7.0 Temporary authentication failure'),
  localError: () => smtpError(451, '4.3.0 Temporary local error in processing'),
  tooLarge: (limit = MAX_MESSAGE_BYTES) => smtpError(552, `5.3.4 Message size exceeds the limit of ${limit} bytes`),
  tooManyRecipients: (limit: number) => smtpError(452, `4.5.3 Too many recipients (at most ${limit} per message)`),
  badRecipient: () => smtpError(501, '5.1.3 Bad recipient address syntax'),
  unknownRecipient: () => smtpError(550, '5.1.1 Recipient address rejected: no such user here'),
  noFrom: () => smtpError(554, '5.6.0 The message has no valid From header'),
};

/** The documented replies to a full per-second window or day, given at MAIL FROM (https://emailit.com/docs/smtp.md). */
export function limitReply(refusal: Pick<SendLimitRefusal, 'limitType'>): SmtpError {
  return refusal.limitType === 'daily'
    ? smtpError(452, '4.5.3 Daily message limit exceeded')
    : smtpError(452, '4.4.5 Messages per second limit exceeded');
}

/**
 * The SMTP reply for a refusal of the send pipeline (acceptMessage), so a message refused over
 * SMTP is refused for the same reason as over the API, with the closest standard code:
 * - 422 Domain not verified → 530 5.7.1 `From/Sender domain is not verified for this workspace`
 *   (the relay reply); 403 Domain not authorized (a key restricted to another
 *   domain) → the same 530 with its own text: both mean "this sender may not use this From".
 * - 403 unverified-workspace recipient → 550 5.7.1: a policy refusal of those recipients.
 * - 413 → 552 5.3.4 (message too big for system).
 * - 429 → 452 4.4.5 / 4.5.3 as at MAIL FROM (the window can fill between MAIL and DATA).
 * - 402 Insufficient credits → 452 4.3.1. Temporary on purpose: credits can be added, and a
 *   client's queue then delivers the message by itself instead of dropping it. 452 is RFC
 *   5321's "insufficient system storage" (a resource of the receiving system ran out) and
 *   X.3.1 the matching "system full" enhanced code; the text says which resource.
 * - anything else (404 workspace gone, database errors) → 451 4.3.0, retry later.
 */
export function acceptErrorReply(error: unknown): SmtpError {
  if (!(error instanceof ApiError)) return replies.localError();
  const body = error.body as { error?: string; message?: string };
  switch (error.status) {
    case 422:
      return smtpError(530, '5.7.1 From/Sender domain is not verified for this workspace');
    case 403:
      if (body.error === 'Domain not authorized') return smtpError(530, '5.7.1 From/Sender domain is not authorized for this API key');
      return smtpError(550, `5.7.1 ${body.message ?? 'Recipient not allowed'}`);
    case 413:
      return replies.tooLarge();
    case 429:
      return limitReply({ limitType: body.error === 'Daily limit exceeded' ? 'daily' : 'rate' });
    case 402:
      return smtpError(452, `4.3.1 Insufficient credits: ${body.message ?? 'the workspace has no credits left'}`);
    default:
      return replies.localError();
  }
}
