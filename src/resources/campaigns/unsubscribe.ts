// Unsubscribing from campaign mail. Each recipient's copy carries a signed link
// `/unsubscribe/<campaign>.<contact>.<mac>` in {{unsubscribe_url}} and in List-Unsubscribe,
// with List-Unsubscribe-Post: List-Unsubscribe=One-Click (RFC 8058). GET shows a confirmation
// (mail scanners open links; they must not unsubscribe anyone), POST unsubscribes: the mail
// client's one-click POST needs nothing but the link. The MAC (HMAC-SHA256 under a key derived
// from the service's secret) carries no expiry: links in mail sent months ago keep working.
// The mailto target of List-Unsubscribe is a signed address whose mail (any content) does the
// same, received by the inbound listener (src/smtp/inbound.ts). Automation mail to a contact
// carries the same link with the automation's id in the campaign's place (no mailto: its
// emails have no recipient snapshot to find the contact by).
import { timingSafeEqual } from 'node:crypto';
import { hmacSha256, subkey } from '../../platform/hmac.ts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../../platform/context.ts';
import { looksLikeId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { unsubscribeContact } from '../contacts/service.ts';
import { findContactById } from '../contacts/service.ts';
import { answerErrorsAsPages, messagePage, PAGE_BODY_LIMIT, sendPage } from '../audiences/service.ts';
import { returnPathDomain, verpAddress } from '../../mail/verp.ts';
import { recipientsOf } from './records.ts';
import { transact } from '../../platform/db/transact.ts';

/** The VERP id of a mailto unsubscribe: `u-<email id>` (a bounce's is the email id itself). */
export const UNSUBSCRIBE_MAILBOX_PREFIX = 'u-';

/** The mailto target of List-Unsubscribe: a MAC-signed address at the sending domain's
 *  return-path host, whose MX (published with the domain) is Postlane's inbound listener. */
export function unsubscribeMailbox(ctx: AppContext, emailId: string, fromAddress: string): string {
  const domain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1);
  return verpAddress(`${UNSUBSCRIBE_MAILBOX_PREFIX}${emailId}`, returnPathDomain(domain, ctx.config.dkimSelector), ctx.verpSecret);
}

/** A mail to an unsubscribe mailbox: the recipient of that campaign email unsubscribes. */
export async function unsubscribeByEmail(ctx: AppContext, emailId: string): Promise<boolean> {
  const recipient = await ctx.db
    .selectFrom('campaign_recipients')
    .select(['campaign_id', 'contact_id'])
    .where('email_id', '=', emailId)
    .executeTakeFirst();
  return recipient ? unsubscribeByToken(ctx, recipient.campaign_id, recipient.contact_id) : false;
}

function mac(ctx: AppContext, campaignId: string, contactId: string): string {
  return hmacSha256(subkey(ctx.verpSecret, 'postlane campaign unsubscribe v1'), `${campaignId}:${contactId}`)
    .toString('base64url')
    .slice(0, 22);
}

export function unsubscribeToken(ctx: AppContext, campaignId: string, contactId: string): string {
  return `${campaignId}.${contactId}.${mac(ctx, campaignId, contactId)}`;
}

export const unsubscribeUrl = (ctx: AppContext, campaignId: string, contactId: string) =>
  `${ctx.config.publicUrl}/unsubscribe/${unsubscribeToken(ctx, campaignId, contactId)}`;

/** The campaign and contact a token names, or null when it is not one of ours. */
export function verifyUnsubscribeToken(ctx: AppContext, token: string): { campaignId: string; contactId: string } | null {
  if (token.length > 200) return null;
  const [campaignId, contactId, given, ...rest] = token.split('.');
  // An automation's id in place of the campaign's: its contact mail carries the same links.
  if (rest.length > 0 || !given || !(looksLikeId(campaignId, 'cmp') || looksLikeId(campaignId, 'aut')) || !looksLikeId(contactId, 'con'))
    return null;
  const a = Buffer.from(given);
  const b = Buffer.from(mac(ctx, campaignId, contactId));
  return a.length === b.length && timingSafeEqual(a, b) ? { campaignId, contactId } : null;
}

/** Unsubscribes the contact a verified token names from all campaigns (contact.updated,
 *  subscriber.updated for the campaign's audiences) and counts it for the campaign. Idempotent. */
export async function unsubscribeByToken(ctx: AppContext, campaignId: string, contactId: string): Promise<boolean> {
  // Run again when PostgreSQL ends it in a deadlock: a one-click POST racing another write to the contact.
  return transact(ctx.db, async (tx) => {
    const campaign = await tx
      .selectFrom('campaigns')
      .select(['id', 'workspace_id', 'recipients'])
      .where('id', '=', campaignId)
      .executeTakeFirst();
    const workspaceId =
      campaign?.workspace_id ??
      (await tx.selectFrom('contacts').select('workspace_id').where('id', '=', contactId).executeTakeFirst())?.workspace_id;
    if (!workspaceId) return false;
    const contact = await findContactById(tx, workspaceId, contactId);
    if (!contact) return false; // deleted since: nothing left to send to
    if (contact.unsubscribed !== 1) {
      const audienceIds = campaign
        ? recipientsOf(campaign)
            .filter((r) => !r.exclude)
            .map((r) => r.audience_id)
        : [];
      await unsubscribeContact(tx, workspaceId, contact.id, { audienceIds });
    }
    await tx
      .updateTable('campaign_recipients')
      .set({ unsubscribed_at: nowIso() })
      .where('campaign_id', '=', campaignId)
      .where('contact_id', '=', contactId)
      .where('unsubscribed_at', 'is', null)
      .execute();
    return true;
  });
}

const html = (reply: FastifyReply, status: number, body: string) => sendPage(reply, status, body);

const hidden = { schema: { hide: true }, config: { scope: 'public' as const } };
// A one-click POST carries one field (List-Unsubscribe=One-Click), a page's button none.
const posted = { ...hidden, bodyLimit: PAGE_BODY_LIMIT };
type TokenParams = { Params: { token: string } };

export async function registerUnsubscribePages(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // The one-click POST is form-encoded (or multipart); its body says nothing the link does not.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, {}));
  answerErrorsAsPages(app, ctx.log);
  const invalid = (reply: FastifyReply) =>
    html(reply, 404, messagePage('Link not valid', 'This unsubscribe link is not valid.', { alert: true }));

  app.get<TokenParams>('/unsubscribe/:token', hidden, async (request, reply) => {
    if (!verifyUnsubscribeToken(ctx, request.params.token)) return invalid(reply);
    return html(
      reply,
      200,
      messagePage('Unsubscribe', 'Do you want to stop receiving these emails? Confirm below.', {
        button: { action: `/unsubscribe/${request.params.token}`, label: 'Unsubscribe' },
      }),
    );
  });

  app.post<TokenParams>('/unsubscribe/:token', posted, async (request, reply) => {
    const named = verifyUnsubscribeToken(ctx, request.params.token);
    if (!named) return invalid(reply);
    await unsubscribeByToken(ctx, named.campaignId, named.contactId);
    return html(reply, 200, messagePage('You are unsubscribed', 'You will not receive these emails any more.'));
  });
}
