// The hosted pages (no key, no JavaScript, 30 requests per minute per IP):
//   /subscribe/:token          a public audience's subscribe form (GET) and its submission (POST)
//   /subscribe/confirm/:signed the double opt-in link: GET shows a Confirm button, POST confirms
//   /subscribe/leave/:signed   leave one audience: GET asks, POST unsubscribes the membership
// Confirming and leaving take a POST so that mail scanners that open every link in a
// message neither confirm on a person's behalf nor unsubscribe them.
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../platform/context.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { normalizeAddress } from '../../platform/addresses.ts';
import { findContactById } from '../contacts/service.ts';
import { doubleOptInOf, findAudienceByToken, type AudienceRow } from './records.ts';
import { confirmSubscription, findConfirmation, publicNameOf } from './confirmations.ts';
import { sendWelcome } from './welcome.ts';
import { publicSubscribe } from './subscriber-api.ts';
import { setSubscribed } from './subscribers.ts';
import { verifyLink } from './links.ts';
import { answerErrorsAsPages, messagePage, PAGE_BODY_LIMIT, sendPage, subscribePage } from './pages.ts';
import { hitSubscribeLimit } from './rate-limits.ts';
import { transact } from '../../platform/db/transact.ts';

const NO_CACHE = 'no-store';
const hidden = { schema: { hide: true }, config: { scope: 'public' as const } };
const posted = { ...hidden, bodyLimit: PAGE_BODY_LIMIT };
type TokenParams = { Params: { token: string } };

const html = (reply: FastifyReply, status: number, body: string, formTargets: string[] = []) => sendPage(reply, status, body, formTargets);

/** Counts the request against the per-IP limit; false (and the 429 page sent) when over it. */
function withinLimit(request: FastifyRequest, reply: FastifyReply): boolean {
  const decision = hitSubscribeLimit(request);
  if (decision.allowed) return true;
  reply.header('retry-after', String(decision.retryAfter));
  html(reply, 429, messagePage('Too many requests', `Please wait ${decision.retryAfter} seconds and try again.`, { alert: true }));
  return false;
}

const notFoundPage = (reply: FastifyReply) =>
  html(reply, 404, messagePage('Page not found', 'This subscribe page does not exist or is no longer public.', { alert: true }));
const expiredPage = (reply: FastifyReply) =>
  html(
    reply,
    404,
    messagePage('Link not valid', 'This link is not valid or has expired. Subscribe again to get a new one.', { alert: true }),
  );

async function publicAudience(ctx: AppContext, token: string): Promise<AudienceRow | null> {
  const audience = await findAudienceByToken(ctx.db, token);
  return audience && audience.visibility === 'public' ? audience : null;
}

function originsOf(url: string): string[] {
  const origin = URL.parse(url)?.origin;
  return origin && origin !== 'null' ? [origin] : [];
}

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

export async function registerHostedPages(app: FastifyInstance, ctx: AppContext) {
  // The limit is each route's own (PAGE_BODY_LIMIT), so a 413 can say which one applied.
  await app.register(formbody);
  answerErrorsAsPages(app, ctx.log);

  app.get<TokenParams>('/subscribe/:token', hidden, async (request, reply) => {
    if (!withinLimit(request, reply)) return reply;
    const audience = await publicAudience(ctx, request.params.token);
    if (!audience) return notFoundPage(reply);
    return html(reply, 200, subscribePage(publicNameOf(audience), audience.public_description, request.url));
  });

  app.post<TokenParams>('/subscribe/:token', posted, async (request, reply) => {
    if (!withinLimit(request, reply)) return reply;
    const audience = await publicAudience(ctx, request.params.token);
    if (!audience) return notFoundPage(reply);
    const form = (request.body ?? {}) as Record<string, unknown>;
    const values = { email: text(form.email), first_name: text(form.first_name), last_name: text(form.last_name) };
    const name = publicNameOf(audience);
    if (normalizeAddress(values.email) === null) {
      return html(
        reply,
        400,
        subscribePage(name, audience.public_description, request.url, {
          error: 'Enter a valid email address, like name@example.com.',
          values,
        }),
      );
    }
    try {
      const outcome = await publicSubscribe(ctx, audience, {
        email: values.email,
        ...(values.first_name ? { first_name: values.first_name } : {}),
        ...(values.last_name ? { last_name: values.last_name } : {}),
      });
      if (outcome === 'pending_confirmation')
        return html(
          reply,
          200,
          messagePage('Check your inbox', `We sent a link to ${values.email}. Follow it to confirm your subscription to ${name}.`),
        );
      if (outcome === 'already_subscribed')
        return html(reply, 200, messagePage('Already subscribed', `${values.email} is already subscribed to ${name}.`));
      return html(reply, 200, messagePage('You are subscribed', `${values.email} is now subscribed to ${name}.`));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const message =
        error.status === 422
          ? 'This list cannot take new subscribers right now.'
          : 'We could not sign you up right now. Please try again later.';
      return html(
        reply,
        error.status === 422 ? 422 : 503,
        subscribePage(name, audience.public_description, request.url, { error: message, values }),
      );
    }
  });

  app.get<TokenParams>('/subscribe/confirm/:token', hidden, async (request, reply) => {
    if (!withinLimit(request, reply)) return reply;
    const found = await findConfirmation(ctx, ctx.db, request.params.token);
    if (!found) return expiredPage(reply);
    const name = publicNameOf(found.audience);
    if (found.confirmation.confirmed_at)
      return html(reply, 200, messagePage('Already confirmed', `${found.confirmation.email} is subscribed to ${name}.`));
    // Confirming may redirect to the audience's own page: the form may go there.
    const redirect = doubleOptInOf(found.audience).redirect_url;
    const targets = redirect ? originsOf(redirect) : [];
    return html(
      reply,
      200,
      messagePage('Confirm your subscription', `Subscribe ${found.confirmation.email} to ${name}?`, {
        button: { action: request.url, label: 'Confirm subscription' },
      }),
      targets,
    );
  });

  app.post<TokenParams>('/subscribe/confirm/:token', posted, async (request, reply) => {
    if (!withinLimit(request, reply)) return reply;
    try {
      const done = await transact(ctx.db, async (tx) => {
        const found = await findConfirmation(ctx, tx, request.params.token);
        if (!found) return null;
        const { outcome } = await confirmSubscription(tx, found.confirmation, found.audience);
        return { ...found, outcome };
      });
      if (!done) return expiredPage(reply);
      await sendWelcome(ctx, done.audience, done.confirmation.email, done.outcome);
      const redirect = doubleOptInOf(done.audience).redirect_url;
      if (redirect) return reply.code(303).header('location', redirect).header('cache-control', NO_CACHE).send();
      return html(
        reply,
        200,
        messagePage('Subscription confirmed', `${done.confirmation.email} is now subscribed to ${publicNameOf(done.audience)}.`),
      );
    } catch (error) {
      if (error instanceof ApiError && error.status === 422)
        return html(reply, 422, messagePage('List full', 'This list cannot take new subscribers right now.', { alert: true }));
      throw error;
    }
  });

  app.get<TokenParams>('/subscribe/leave/:token', hidden, async (request, reply) => {
    if (!withinLimit(request, reply)) return reply;
    const found = await membershipOfLink(ctx, request.params.token);
    if (!found) return expiredPage(reply);
    const name = publicNameOf(found.audience);
    if (found.subscriber.subscribed === 0)
      return html(reply, 200, messagePage('Unsubscribed', `${found.contact.email} is not subscribed to ${name}.`));
    return html(
      reply,
      200,
      messagePage('Unsubscribe', `Stop sending ${name} to ${found.contact.email}?`, {
        button: { action: request.url, label: 'Unsubscribe' },
      }),
    );
  });

  app.post<TokenParams>('/subscribe/leave/:token', posted, async (request, reply) => {
    if (!withinLimit(request, reply)) return reply;
    const found = await transact(ctx.db, async (tx) => {
      const membership = await membershipOfLink(ctx, request.params.token, tx);
      if (membership)
        await setSubscribed(tx, membership.audience.workspace_id, membership.audience, membership.contact, membership.subscriber, false);
      return membership;
    });
    if (!found) return expiredPage(reply);
    return html(reply, 200, messagePage('Unsubscribed', `${found.contact.email} will no longer receive ${publicNameOf(found.audience)}.`));
  });
}

async function membershipOfLink(ctx: AppContext, token: string, db = ctx.db) {
  const id = verifyLink(ctx, 'leave', token);
  if (!id) return null;
  const subscriber = await db.selectFrom('subscribers').selectAll().where('id', '=', id).executeTakeFirst();
  if (!subscriber) return null;
  const audience = await db.selectFrom('audiences').selectAll().where('id', '=', subscriber.audience_id).executeTakeFirst();
  const contact = await findContactById(db, subscriber.workspace_id, subscriber.contact_id);
  return audience && contact ? { subscriber, audience, contact } : null;
}
