// One signed POST of a batch to a webhook's URL
// (https://emailit.com/docs/webhooks/request-signature.md): the hostname is resolved and checked
// again at every attempt and the connection pinned to the checked address; 30 s for the whole
// exchange; redirects are not followed and count as failures.
import type { AppContext } from '../../platform/context.ts';
import { nowMs } from '../../platform/clock.ts';
import { fetchPinned, parseHttpUrl, resolvePublicAddress } from '../../platform/net.ts';
import { deliveryHeaders, isSuccessStatus, REQUEST_TIMEOUT_MS, RESPONSE_EXCERPT_CHARS } from './policy.ts';
import { resolverFor } from './service.ts';
import { traceHeaders, tracingOn } from '../../platform/tracing.ts';

export interface SendOutcome {
  success: boolean;
  /** The endpoint's HTTP status, null when no response came. */
  status: number | null;
  /** The start of the endpoint's answer. */
  excerpt: string | null;
  /** Why it failed, null on success. */
  error: string | null;
  durationMs: number;
}

export async function sendBatch(ctx: AppContext, url: string, secret: string, body: string): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const target = parseHttpUrl(url);
    const address = await resolvePublicAddress(resolverFor(ctx), target.hostname, ctx.config.allowPrivateUrls);
    const response = await fetchPinned(target, address, {
      method: 'POST',
      // While tracing is on, the webhook span's traceparent goes along (tracing.ts).
      headers: tracingOn
        ? { ...deliveryHeaders(secret, body, Math.floor(nowMs() / 1000)), ...traceHeaders() }
        : deliveryHeaders(secret, body, Math.floor(nowMs() / 1000)),
      body,
      timeoutMs: Math.max(1000, REQUEST_TIMEOUT_MS - elapsed()),
      maxBytes: RESPONSE_EXCERPT_CHARS * 4,
      truncate: true,
    });
    // NUL characters cannot be stored in PostgreSQL text.
    const excerpt = response.body
      .toString('utf8')
      .replace(/\u0000/g, '')
      .slice(0, RESPONSE_EXCERPT_CHARS);
    const success = isSuccessStatus(response.status);
    let error: string | null = null;
    if (!success) {
      error =
        response.status >= 300 && response.status < 400 ? `Redirect (HTTP ${response.status}) not followed` : `HTTP ${response.status}`;
    }
    return { success, status: response.status, excerpt, error, durationMs: elapsed() };
  } catch (error) {
    return {
      success: false,
      status: null,
      excerpt: null,
      error: (error as Error).message.replace(/\u0000/g, '').slice(0, 500),
      durationMs: elapsed(),
    };
  }
}
