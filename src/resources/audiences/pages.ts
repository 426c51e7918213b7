// HTML of the hosted pages (subscribe, confirm, leave an audience) and of the confirmation
// email. Server-rendered, no JavaScript: plain forms that post back. Accessible: a language,
// a title, one h1 in a main landmark, labels tied to inputs, messages in role=status/alert,
// visible focus, enough contrast. Every value is escaped.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { clientErrorOf } from '../../platform/http/client-errors.ts';
import { reasonPhrase } from '../../platform/http/errors.ts';
import type { AudienceEmailSettings } from './records.ts';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STYLE = `
  body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a; background: #f5f5f5; margin: 0; }
  main { max-width: 32rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 8px; }
  h1 { font-size: 1.5rem; margin-top: 0; }
  label { display: block; font-weight: 600; margin-top: 1rem; }
  input { display: block; width: 100%; box-sizing: border-box; font: inherit; padding: .5rem; margin-top: .25rem; border: 1px solid #6b6b6b; border-radius: 4px; }
  button { margin-top: 1.5rem; font: inherit; font-weight: 600; padding: .6rem 1.2rem; color: #fff; background: #1f4fbf; border: 0; border-radius: 4px; cursor: pointer; }
  input:focus, button:focus { outline: 3px solid #f2a900; outline-offset: 2px; }
  .alert { color: #a30000; font-weight: 600; }
  .hint { color: #4a4a4a; font-size: .9rem; }`;

// The pages run no script and load nothing: their one style sheet is inline, allowed by its
// hash. Forms post back to the page's own origin (and a form whose answer redirects elsewhere
// names that origin too: browsers hold redirects after a post to form-action). No site may
// frame them (clickjacking a Confirm or Unsubscribe button); their URLs hold tokens, so no
// Referer leaves them.
const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/** The headers of every hosted page; `formTargets` are origins a form's answer may redirect to. */
export function pageHeaders(formTargets: string[] = []): Record<string, string> {
  const formAction = ["'self'", ...formTargets].join(' ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; style-src ${STYLE_SOURCE}; form-action ${formAction}; base-uri 'none'; frame-ancestors 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}

/** Sends `body` as a hosted page. */
export function sendPage(reply: FastifyReply, status: number, body: string, formTargets: string[] = []) {
  return reply.code(status).headers(pageHeaders(formTargets)).send(body);
}

/** A hosted page's form: an email address and two names, or a bare button. */
export const PAGE_BODY_LIMIT = 16 * 1024;

const PAGE_TITLES: Record<number, string> = {
  400: 'This request could not be read',
  413: 'Too much was sent',
  415: 'This request could not be read',
};

/** Errors of the hosted pages of `app` (a body too large, of a type no form sends, a server
 *  fault) answered as a page with the same status: a person sees them in a browser. */
export function answerErrorsAsPages(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((error, request, reply) => {
    const refused = clientErrorOf(error, request);
    if (!refused) {
      log.error({ err: error, reqId: request.id, url: request.url }, 'unhandled error');
      return sendPage(
        reply,
        500,
        messagePage('Something went wrong', 'This page could not be shown. Please try again later.', { alert: true }),
      );
    }
    const { message, error: short } = refused.body as { message?: unknown; error?: unknown };
    const text = typeof message === 'string' ? message : typeof short === 'string' ? short : reasonPhrase(refused.status);
    reply.headers(refused.headers);
    return sendPage(reply, refused.status, messagePage(PAGE_TITLES[refused.status] ?? reasonPhrase(refused.status), text, { alert: true }));
  });
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export interface SubscribeFormValues {
  email?: string;
  first_name?: string;
  last_name?: string;
}

export function subscribePage(
  name: string,
  description: string | null,
  action: string,
  options: { error?: string; values?: SubscribeFormValues } = {},
): string {
  const v = options.values ?? {};
  const field = (id: string, label: string, type: string, value: string | undefined, extra = '') =>
    `<label for="${id}">${label}</label>\n<input id="${id}" name="${id}" type="${type}" value="${escapeHtml(value ?? '')}"${extra}>`;
  return page(
    `Subscribe to ${name}`,
    `<h1>Subscribe to ${escapeHtml(name)}</h1>
${description ? `<p>${escapeHtml(description)}</p>` : ''}
${options.error ? `<p class="alert" role="alert" id="form-error">${escapeHtml(options.error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}">
${field('email', 'Email address', 'email', v.email, ` required autocomplete="email"${options.error ? ' aria-describedby="form-error" aria-invalid="true"' : ''}`)}
${field('first_name', 'First name <span class="hint">(optional)</span>', 'text', v.first_name, ' autocomplete="given-name"')}
${field('last_name', 'Last name <span class="hint">(optional)</span>', 'text', v.last_name, ' autocomplete="family-name"')}
<button type="submit">Subscribe</button>
</form>`,
  );
}

/** A page with a heading, a message and optionally one button posting back. */
export function messagePage(
  title: string,
  message: string,
  options: { button?: { action: string; label: string }; alert?: boolean } = {},
): string {
  const role = options.alert ? 'alert' : 'status';
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p role="${role}"${options.alert ? ' class="alert"' : ''}>${escapeHtml(message)}</p>
${options.button ? `<form method="post" action="${escapeHtml(options.button.action)}"><button type="submit">${escapeHtml(options.button.label)}</button></form>` : ''}`,
  );
}

export function confirmationEmailHtml(settings: AudienceEmailSettings, audienceName: string, link: string): string {
  const heading = settings.heading ?? `Confirm your subscription`;
  const body = settings.body ?? `Please confirm that you want to receive email from ${audienceName}.`;
  const label = settings.button_label ?? 'Confirm subscription';
  const footer = settings.footer ?? `If you did not ask to subscribe, ignore this email: you will not be added.`;
  return `<!doctype html><html lang="en"><body style="font-family:sans-serif;color:#1a1a1a">
<h1 style="font-size:20px">${escapeHtml(heading)}</h1>
<p>${escapeHtml(body)}</p>
<p><a href="${escapeHtml(link)}" style="display:inline-block;padding:10px 18px;background:#1f4fbf;color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(label)}</a></p>
<p style="font-size:13px;color:#4a4a4a">${escapeHtml(footer)}</p>
</body></html>`;
}

export function confirmationEmailText(settings: AudienceEmailSettings, audienceName: string, link: string): string {
  const body = settings.body ?? `Please confirm that you want to receive email from ${audienceName}.`;
  const footer = settings.footer ?? `If you did not ask to subscribe, ignore this email: you will not be added.`;
  return `${settings.heading ?? 'Confirm your subscription'}\n\n${body}\n\n${settings.button_label ?? 'Confirm subscription'}: ${link}\n\n${footer}\n`;
}
