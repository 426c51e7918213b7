// The subscribers API of an audience (https://emailit.com/docs/audiences.md) and the public
// subscribe call, over the membership rules of subscribers.ts: one transaction per request, all or
// nothing.
import type { Db, Executor } from '../../platform/db/database.ts';
import { looksLikeId } from '../../platform/ids.ts';
import { ApiError, plainError } from '../../platform/http/errors.ts';
import { normalizeAddress } from '../../platform/addresses.ts';
import {
  findContact,
  findContactById,
  findOrCreateContact,
  updateContact,
  type ContactFields,
  type ContactRow,
} from '../contacts/service.ts';
import { doubleOptInOf, subscriberObject, type AudienceRow, type SubscriberRow } from './records.ts';
import { deleteSubscriber, findMembership, setSubscribed, subscribeContact } from './subscribers.ts';
import { addSubscriber, audienceUsage, requireAudience } from './service.ts';
import { requestConfirmation } from './confirmations.ts';
import { sendWelcome } from './welcome.ts';
import type { AppContext } from '../../platform/context.ts';
import { transact } from '../../platform/db/transact.ts';

const NOT_FOUND = 'Subscriber not found';

/** The membership a path names (`sub_` id or the contact's address) with its contact. */
export async function requireSubscriber(
  db: Executor,
  workspaceId: string,
  audience: AudienceRow,
  idOrEmail: string,
): Promise<{ subscriber: SubscriberRow; contact: ContactRow }> {
  let subscriber: SubscriberRow | undefined;
  let contact: ContactRow | undefined;
  if (looksLikeId(idOrEmail, 'sub')) {
    subscriber = await db
      .selectFrom('subscribers')
      .selectAll()
      .where('id', '=', idOrEmail)
      .where('audience_id', '=', audience.id)
      .executeTakeFirst();
    if (subscriber) contact = await findContactById(db, workspaceId, subscriber.contact_id);
  } else {
    contact = await findContact(db, workspaceId, idOrEmail);
    if (contact) subscriber = await findMembership(db, audience.id, contact.id);
  }
  if (!subscriber || !contact) throw plainError(404, NOT_FOUND);
  return { subscriber, contact };
}

export async function updateSubscriber(
  tx: Executor,
  workspaceId: string,
  audience: AudienceRow,
  idOrEmail: string,
  input: ContactFields & { subscribed?: boolean },
) {
  let { subscriber, contact } = await requireSubscriber(tx, workspaceId, audience, idOrEmail);
  const { first_name, last_name, custom_fields } = input;
  if (first_name !== undefined || last_name !== undefined || custom_fields !== undefined)
    contact = await updateContact(tx, workspaceId, contact, { first_name, last_name, custom_fields });
  if (input.subscribed !== undefined) subscriber = await setSubscribed(tx, workspaceId, audience, contact, subscriber, input.subscribed);
  return subscriberObject(subscriber, audience, contact);
}

export async function removeSubscriber(tx: Executor, workspaceId: string, audience: AudienceRow, idOrEmail: string) {
  const { subscriber, contact } = await requireSubscriber(tx, workspaceId, audience, idOrEmail);
  await deleteSubscriber(tx, workspaceId, audience, contact, subscriber);
  return { object: 'subscriber' as const, id: subscriber.id, deleted: true as const };
}

export interface BulkEntry extends ContactFields {
  email: string;
}

/** Every entry's address checked first: one bad entry refuses the whole request (400). */
function checkEntries(entries: readonly { email: string }[]): void {
  const errors = entries
    .map((entry, index) => ({ index, email: entry.email, valid: normalizeAddress(entry.email) !== null }))
    .filter((e) => !e.valid)
    .map(({ index, email }) => ({ index, email, error: 'Invalid email address' }));
  if (errors.length > 0)
    throw new ApiError(400, {
      error: `${errors.length} of ${entries.length} entries are not valid email addresses; nothing was added`,
      errors,
    });
}

/** Adds many addresses in one transaction (each as the single add: contact created or
 *  updated, resubscribed if it had unsubscribed); the cap refuses the whole request. */
export async function bulkAddSubscribers(db: Db, workspaceId: string, audience: AudienceRow, entries: readonly BulkEntry[]) {
  checkEntries(entries);
  return transact(db, async (tx) => {
    const counts = { created: 0, resubscribed: 0, already_subscribed: 0, contacts_created: 0 };
    for (const entry of entries) {
      const { outcome, contactCreated } = await addSubscriber(tx, workspaceId, audience, entry);
      if (outcome === 'created') counts.created++;
      else if (outcome === 'resubscribed') counts.resubscribed++;
      else counts.already_subscribed++;
      if (contactCreated) counts.contacts_created++;
    }
    const fresh = await requireAudience(tx, workspaceId, audience.id);
    return { object: 'bulk_result' as const, ...counts, usage: await audienceUsage(tx, workspaceId, fresh) };
  });
}

/** Deletes many memberships (by `sub_` id or address) in one transaction. */
export async function bulkRemoveSubscribers(db: Db, workspaceId: string, audience: AudienceRow, entries: readonly string[]) {
  return transact(db, async (tx) => {
    let removed = 0;
    const notFound: string[] = [];
    for (const entry of new Set(entries)) {
      try {
        await removeSubscriber(tx, workspaceId, audience, entry);
        removed++;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) notFound.push(entry);
        else throw error;
      }
    }
    const fresh = await requireAudience(tx, workspaceId, audience.id);
    return { object: 'bulk_result' as const, removed, not_found: notFound, usage: await audienceUsage(tx, workspaceId, fresh) };
  });
}

export type PublicOutcome = 'subscribed' | 'already_subscribed' | 'pending_confirmation';

/**
 * A visitor's subscribe (hosted page, POST /v1/audiences/subscribe/:token): with double opt-in,
 * a confirmation email; else the contact is added when absent (an existing contact's fields
 * are not overwritten by a public request) and subscribed, an unsubscribed membership again.
 * A contact unsubscribed from all campaigns stays so until a double opt-in proves consent.
 */
export async function publicSubscribe(ctx: AppContext, audience: AudienceRow, input: BulkEntry): Promise<PublicOutcome> {
  if (doubleOptInOf(audience).enabled) {
    const contact = await findContact(ctx.db, audience.workspace_id, input.email);
    const member = contact ? await findMembership(ctx.db, audience.id, contact.id) : undefined;
    if (member?.subscribed === 1 && contact?.unsubscribed === 0) return 'already_subscribed';
    await requestConfirmation(ctx, audience, input);
    return 'pending_confirmation';
  }
  const { outcome, email } = await transact(ctx.db, async (tx) => {
    const { contact } = await findOrCreateContact(tx, audience.workspace_id, input);
    return { ...(await subscribeContact(tx, audience.workspace_id, audience, contact)), email: contact.email };
  });
  await sendWelcome(ctx, audience, email, outcome);
  return outcome === 'already_subscribed' ? 'already_subscribed' : 'subscribed';
}
