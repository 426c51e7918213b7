// Double opt-in (https://emailit.com/docs/audiences.md): a subscribe request for an audience with
// double opt-in on writes a pending confirmation and sends the confirmation email — through the
// same acceptance and delivery path as API mail (DKIM, MX, retries, events, one credit), in one
// transaction — and nothing else. Following the signed link creates (or resubscribes) the
// subscriber; since the visitor proved the address is theirs, a contact that had unsubscribed from
// all campaigns is subscribed again.
import type { AppContext } from '../../platform/context.ts';
import type { Executor } from '../../platform/db/database.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { newId } from '../../platform/ids.ts';
import { isoFromMs, nowIso, nowMs } from '../../platform/clock.ts';
import { plainError } from '../../platform/http/errors.ts';
import { acceptMessage, parseAddressField, type StoredMessage } from '../emails/service.ts';
import { requireAddress } from '../../platform/addresses.ts';
import { validateCustomFields } from '../custom-fields/service.ts';
import { findOrCreateContact, updateContact, type ContactFields } from '../contacts/service.ts';
import { doubleOptInOf, type AudienceRow, type SubscriberRow } from './records.ts';
import { subscribeContact, type SubscribeOutcome } from './subscribers.ts';
import { confirmUrl, verifyLink } from './links.ts';
import { confirmationEmailHtml, confirmationEmailText } from './pages.ts';
import type { Selectable } from 'kysely';
import type { SubscriptionConfirmationsTable } from './tables.ts';

const VALID_DAYS = 30;

export interface PendingConfirmation {
  confirmationId: string;
  emailId: string;
  email: string;
}

/** The audience's public name (what visitors see). */
export const publicNameOf = (audience: AudienceRow) => audience.public_name ?? audience.name;

/**
 * Records the request and sends the confirmation email. `principal` is the API key of an API
 * request; hosted pages and the public subscribe link send as the workspace with no key.
 * 422 when the audience has double opt-in off; the sending rules' errors as for any send.
 */
export async function requestConfirmation(
  ctx: AppContext,
  audience: AudienceRow,
  input: ContactFields & { email: string },
  principal?: Principal,
): Promise<PendingConfirmation> {
  const settings = doubleOptInOf(audience);
  if (!settings.enabled) throw plainError(422, 'Double opt-in is not enabled for this audience');
  const email = requireAddress(input.email);
  const customFields =
    input.custom_fields === undefined ? null : await validateCustomFields(ctx.db, audience.workspace_id, input.custom_fields);
  const from = parseAddressField(settings.email.from ?? '').addresses[0];
  if (!from) throw plainError(422, 'Double opt-in has no sender address');
  const confirmationId = newId('subc');
  const link = confirmUrl(ctx, confirmationId);
  const name = publicNameOf(audience);
  const message: StoredMessage = {
    from,
    to: [{ address: email, name: '' }],
    cc: [],
    bcc: [],
    reply_to: settings.email.reply_to ? parseAddressField(settings.email.reply_to).addresses : [],
    subject: settings.email.subject ?? `Confirm your subscription to ${name}`,
    html: confirmationEmailHtml(settings.email, name, link),
    text: confirmationEmailText(settings.email, name, link),
    headers: { 'Auto-Submitted': 'auto-generated' },
    attachments: [],
  };
  // No key sends it from a hosted page: the email row then names none.
  const sender: Principal = principal ?? {
    keyId: null as unknown as string,
    keyHash: '',
    workspaceId: audience.workspace_id,
    scope: 'full',
    sendingDomainId: null,
  };
  const accepted = await acceptMessage(ctx, sender, {
    message,
    fromHeader: settings.email.from!,
    meta: null,
    scheduledAt: null,
    tracking: false,
    source: 'api',
    inTransaction: async (tx, rows) => {
      const now = nowIso();
      await tx
        .insertInto('subscription_confirmations')
        .values({
          id: confirmationId,
          workspace_id: audience.workspace_id,
          audience_id: audience.id,
          email,
          first_name: input.first_name ?? null,
          last_name: input.last_name ?? null,
          custom_fields: customFields === null ? null : JSON.stringify(customFields),
          email_id: rows[0].id,
          confirmed_at: null,
          expires_at: isoFromMs(nowMs() + VALID_DAYS * 86_400_000),
          created_at: now,
        })
        .execute();
    },
  });
  return { confirmationId, emailId: accepted.rows[0].id, email };
}

type ConfirmationRow = Selectable<SubscriptionConfirmationsTable>;

/** The pending confirmation a signed link names, or null (unknown, forged or expired). */
export async function findConfirmation(
  ctx: AppContext,
  db: Executor,
  token: string,
): Promise<{ confirmation: ConfirmationRow; audience: AudienceRow } | null> {
  const id = verifyLink(ctx, 'confirm', token);
  if (!id) return null;
  const confirmation = await db.selectFrom('subscription_confirmations').selectAll().where('id', '=', id).executeTakeFirst();
  if (!confirmation || (confirmation.confirmed_at === null && confirmation.expires_at < nowIso())) return null;
  const audience = await db.selectFrom('audiences').selectAll().where('id', '=', confirmation.audience_id).executeTakeFirst();
  return audience ? { confirmation, audience } : null;
}

/**
 * Confirms: the contact is created or updated with what was sent, the membership created or
 * resubscribed. Following the link again changes nothing. 422 `usage` when the audience
 * filled up meanwhile (the caller's transaction rolls back).
 */
export async function confirmSubscription(
  tx: Executor,
  confirmation: ConfirmationRow,
  audience: AudienceRow,
): Promise<{ subscriber: SubscriberRow; outcome: SubscribeOutcome | 'already_confirmed' }> {
  const workspaceId = audience.workspace_id;
  const fields: ContactFields & { email: string } = { email: confirmation.email };
  if (confirmation.first_name !== null) fields.first_name = confirmation.first_name;
  if (confirmation.last_name !== null) fields.last_name = confirmation.last_name;
  if (confirmation.custom_fields !== null) fields.custom_fields = JSON.parse(confirmation.custom_fields) as Record<string, unknown>;
  let { contact } = await findOrCreateContact(tx, workspaceId, fields, { overwrite: confirmation.confirmed_at === null });
  if (confirmation.confirmed_at === null && contact.unsubscribed === 1)
    contact = await updateContact(tx, workspaceId, contact, { unsubscribed: false });
  const { subscriber, outcome } = await subscribeContact(tx, workspaceId, audience, contact, {
    resubscribe: confirmation.confirmed_at === null,
  });
  if (confirmation.confirmed_at !== null) return { subscriber, outcome: 'already_confirmed' };
  await tx.updateTable('subscription_confirmations').set({ confirmed_at: nowIso() }).where('id', '=', confirmation.id).execute();
  return { subscriber, outcome };
}
