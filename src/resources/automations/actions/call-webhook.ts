// call_webhook: one HTTP request; the outcome is the status class (2xx, 4xx, …), timeout or
// network_error, and a non-2xx answer does not fail the step. The URL meets the webhooks' guard
// when the automation is saved and again every time the step runs (DNS can change).
import { Type } from '@sinclair/typebox';
import { fetchPinned, parseHttpUrl, resolvePublicAddress, FetchError, UrlRefusedError } from '../../../platform/net.ts';
import { resolverFor } from '../../webhooks/service.ts';
import { hasPlaceholder, isObject, nonEmpty, StepFailure, type ActionDefinition } from './action.ts';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The part of a `call_webhook` URL whose host can be checked before a run: the URL itself, or
 * what precedes its first placeholder when the host is complete there (`https://h/{{run.id}}`).
 * null for other schemes and for a host made by a placeholder (checked when the step runs).
 */
export function checkableWebhookUrl(url: string): string | null {
  const fixed = url.trim().split('{{')[0];
  if (!/^https?:\/\//i.test(fixed)) return null;
  if (fixed.length === url.trim().length) return fixed;
  return /^https?:\/\/[^/?#]+[/?#]/i.test(fixed) ? fixed : null;
}

export const callWebhook: ActionDefinition = {
  title: 'Call webhook',
  description:
    'Sends one HTTP request (10 s timeout) and records the status class, timeout or network_error; a non-2xx answer does not fail the step.',
  config: Type.Object({
    url: Type.String({ minLength: 1, description: 'An http or https URL on a public address; placeholders allowed' }),
    method: Type.Optional(
      Type.Union(
        HTTP_METHODS.map((m) => Type.Literal(m)),
        { default: 'POST', description: 'The HTTP method' },
      ),
    ),
    headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Request headers' })),
    body: Type.Optional(Type.Unknown({ description: 'Text (sent as text/plain) or JSON (application/json); not sent with GET' })),
  }),
  branching: 'default',

  // Always, like send_email's `from`: a draft must not keep a URL that points inside our network.
  async checkDraft(c, { key, lookups, add }) {
    const webhookUrl = nonEmpty(c.url) ? checkableWebhookUrl(c.url) : null;
    if (!webhookUrl) return;
    const problem = await lookups.urlProblem(webhookUrl);
    if (problem) add('url', `The url of step "${key}" is refused: ${problem}`);
  },

  check(c, { add }) {
    if (!nonEmpty(c.url)) add('url', 'The url is required.');
    else if (!hasPlaceholder(c.url) && !/^https?:\/\/[^\s]+$/i.test(c.url)) add('url', 'The url must be an http or https URL.');
    if (c.method !== undefined && !HTTP_METHODS.includes(String(c.method).toUpperCase()))
      add('method', `The method must be one of ${HTTP_METHODS.join(', ')}.`);
    if (c.headers !== undefined && (!isObject(c.headers) || Object.values(c.headers).some((v) => typeof v !== 'string')))
      add('headers', 'The headers must be an object of strings.');
  },

  async run({ ctx, config, finish }) {
    const method = String(config.method ?? 'POST').toUpperCase();
    const headers: Record<string, string> = { 'user-agent': 'Postlane-Automations/1', ...(config.headers ?? {}) };
    let body: string | undefined;
    if (config.body !== undefined && config.body !== null && method !== 'GET') {
      body = typeof config.body === 'string' ? config.body : JSON.stringify(config.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
        headers['content-type'] = typeof config.body === 'string' ? 'text/plain' : 'application/json';
    }
    let outcome: string;
    let status: number | null = null;
    let detail: string | null = null;
    try {
      const url = parseHttpUrl(String(config.url));
      const address = await resolvePublicAddress(resolverFor(ctx), url.hostname, ctx.config.allowPrivateUrls);
      const response = await fetchPinned(url, address, { method, headers, body, timeoutMs: 10_000, maxBytes: 4096, truncate: true });
      status = response.status;
      outcome = `${Math.floor(response.status / 100)}xx`;
    } catch (error) {
      if (error instanceof UrlRefusedError) throw new StepFailure(`The webhook URL was refused: ${error.message}`);
      outcome = error instanceof FetchError && error.kind === 'timeout' ? 'timeout' : 'network_error';
      detail = (error as Error).message;
    }
    return finish({ status: 'completed', outcome, data: { result: outcome, status, ...(detail ? { error: detail } : {}) } });
  },
};
