// Hosted subscribe and unsubscribe links: 30 per minute per IP
// (https://emailit.com/docs/limits.md), shared by the hosted pages and POST
// /v1/audiences/subscribe/:token.
import type { FastifyRequest } from 'fastify';
import { messageError } from '../../platform/http/errors.ts';
import { SlidingWindowLimiter, type LimitDecision } from '../../platform/http/rate-limit.ts';

export const SUBSCRIBE_LINKS_PER_MINUTE = 30;
const limiter = new SlidingWindowLimiter(SUBSCRIBE_LINKS_PER_MINUTE, 60_000);

export function hitSubscribeLimit(request: FastifyRequest): LimitDecision {
  return limiter.hit(request.ip ?? 'unknown');
}

/** The JSON 429 of the public subscribe call. */
export function subscribeLimitError(decision: LimitDecision) {
  return messageError(
    429,
    'Rate limit exceeded',
    `At most ${decision.limit} subscribe requests per minute from one address; retry in ${decision.retryAfter} s`,
    {
      limit: decision.limit,
      current: decision.limit,
      retry_after: decision.retryAfter,
    },
  );
}
