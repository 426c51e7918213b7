// Membership changes of a contact in an audience, each in the caller's transaction with its
// subscriber.* event (https://emailit.com/docs/webhooks/event-types.md) and the plan cap (caps.ts).
// Contacts, the API, imports, the hosted pages, campaigns and automations all change memberships
// through here.
import type { Executor } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { releaseSubscriberPlaces, takeSubscriberPlaces, takeSubscriberPlacesAtCommit, workspacePlan } from './caps.ts';
import { subscriberObject, type AudienceRow, type SubscriberRow } from './records.ts';
import type { Selectable } from 'kysely';
import type { Database } from '../../platform/db/schema.ts';

/** Contact rows as the query builder knows them (contacts/tables.ts declares the table). */
type ContactRow = Selectable<Database['contacts']>;
type AudienceRef = Pick<AudienceRow, 'id' | 'name'>;

export type SubscribeOutcome = 'created' | 'resubscribed' | 'already_subscribed' | 'kept_unsubscribed';

export interface SubscribeOptions {
  /** Start the membership unsubscribed (a contact unsubscribed from all campaigns). */
  unsubscribed?: boolean;
  /** What to do with an existing unsubscribed membership: resubscribe it (the API's add,
   *  automations) or leave it (imports never resubscribe). Default true. */
  resubscribe?: boolean;
}

export function findMembership(db: Executor, audienceId: string, contactId: string): Promise<SubscriberRow | undefined> {
  return db
    .selectFrom('subscribers')
    .selectAll()
    .where('contact_id', '=', contactId)
    .where('audience_id', '=', audienceId)
    .executeTakeFirst();
}

/** A new membership row, not yet written (the cap is the caller's). */
export function newSubscriberRow(
  workspaceId: string,
  audienceId: string,
  contactId: string,
  subscribed: boolean,
  now = nowIso(),
): SubscriberRow {
  return {
    id: newId('sub'),
    workspace_id: workspaceId,
    audience_id: audienceId,
    contact_id: contactId,
    subscribed: subscribed ? 1 : 0,
    subscribed_at: subscribed ? now : null,
    unsubscribed_at: subscribed ? null : now,
    created_at: now,
    updated_at: now,
  };
}

/**
 * Subscribes `contact` to `audience`: a new membership (taking a place under the plan's cap,
 * 422 when none is left; `subscriber.created`), a resubscription of an unsubscribed one
 * (`subscriber.updated` + `subscriber.resubscribed`), or nothing when already subscribed.
 */
export async function subscribeContact(
  tx: Executor,
  workspaceId: string,
  audience: AudienceRef,
  contact: ContactRow,
  options: SubscribeOptions = {},
): Promise<{ subscriber: SubscriberRow; outcome: SubscribeOutcome }> {
  const existing = await findMembership(tx, audience.id, contact.id);
  if (existing) {
    if (existing.subscribed === 1) return { subscriber: existing, outcome: 'already_subscribed' };
    if (options.resubscribe === false || options.unsubscribed) return { subscriber: existing, outcome: 'kept_unsubscribed' };
    const subscriber = await setSubscribed(tx, workspaceId, audience, contact, existing, true);
    return { subscriber, outcome: 'resubscribed' };
  }
  await takeSubscriberPlaces(tx, await workspacePlan(tx, workspaceId), audience, 1);
  const subscriber = newSubscriberRow(workspaceId, audience.id, contact.id, !options.unsubscribed);
  await tx.insertInto('subscribers').values(subscriber).execute();
  await emitEvent(tx, workspaceId, 'subscriber.created', subscriberObject(subscriber, audience, contact));
  return { subscriber, outcome: 'created' };
}

/** Turns a membership on or off with its timestamps; `subscriber.updated`, and
 *  `subscriber.resubscribed` when it was off. Unchanged: no write, no event. */
export async function setSubscribed(
  tx: Executor,
  workspaceId: string,
  audience: AudienceRef,
  contact: ContactRow,
  subscriber: SubscriberRow,
  subscribed: boolean,
): Promise<SubscriberRow> {
  if ((subscriber.subscribed === 1) === subscribed) return subscriber;
  const now = nowIso();
  const next: SubscriberRow = subscribed
    ? { ...subscriber, subscribed: 1, subscribed_at: now, unsubscribed_at: null, updated_at: now }
    : { ...subscriber, subscribed: 0, unsubscribed_at: now, updated_at: now };
  await tx
    .updateTable('subscribers')
    .set({ subscribed: next.subscribed, subscribed_at: next.subscribed_at, unsubscribed_at: next.unsubscribed_at, updated_at: now })
    .where('id', '=', subscriber.id)
    .execute();
  const object = subscriberObject(next, audience, contact);
  await emitEvent(tx, workspaceId, 'subscriber.updated', object);
  if (subscribed) await emitEvent(tx, workspaceId, 'subscriber.resubscribed', object);
  return next;
}

/** Deletes a membership (the contact stays), freeing its place; `subscriber.deleted`. */
export async function deleteSubscriber(
  tx: Executor,
  workspaceId: string,
  audience: AudienceRef,
  contact: ContactRow,
  subscriber: SubscriberRow,
): Promise<void> {
  await tx.deleteFrom('subscribers').where('id', '=', subscriber.id).execute();
  await releaseSubscriberPlaces(tx, audience.id, 1);
  await emitEvent(tx, workspaceId, 'subscriber.deleted', subscriberObject(subscriber, audience, contact));
}

/** Removes `contact` from `audience` if it is a member; whether it was. */
export async function removeContactFromAudience(
  tx: Executor,
  workspaceId: string,
  audience: AudienceRef,
  contact: ContactRow,
): Promise<boolean> {
  const existing = await findMembership(tx, audience.id, contact.id);
  if (!existing) return false;
  await deleteSubscriber(tx, workspaceId, audience, contact, existing);
  return true;
}

/**
 * New memberships of one contact in several audiences, written without their events (the
 * caller emits `subscriber.created` after the contact's own event, as the spec orders them).
 * Places are taken in id order, so concurrent writers lock audiences in one order; in a
 * transaction run by groupCommit they are taken with its COMMIT (caps.ts).
 */
export async function insertMemberships(
  tx: Executor,
  workspaceId: string,
  contact: ContactRow,
  audiences: readonly AudienceRef[],
  subscribed: boolean,
): Promise<Array<{ audience: AudienceRef; subscriber: SubscriberRow }>> {
  if (audiences.length === 0) return [];
  const plan = await workspacePlan(tx, workspaceId);
  const sorted = [...audiences].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const now = nowIso();
  const added = [];
  for (const audience of sorted) {
    await takeSubscriberPlacesAtCommit(tx, plan, audience, 1);
    added.push({ audience, subscriber: newSubscriberRow(workspaceId, audience.id, contact.id, subscribed, now) });
  }
  await tx
    .insertInto('subscribers')
    .values(added.map((a) => a.subscriber))
    .execute();
  return added;
}

/** Deletes memberships without their events (the caller emits `subscriber.deleted`). */
export async function deleteMemberships(tx: Executor, memberships: ReadonlyArray<{ subscriber: SubscriberRow }>): Promise<void> {
  const sorted = [...memberships].sort((a, b) => (a.subscriber.audience_id < b.subscriber.audience_id ? -1 : 1));
  for (const { subscriber } of sorted) {
    await tx.deleteFrom('subscribers').where('id', '=', subscriber.id).execute();
    await releaseSubscriberPlaces(tx, subscriber.audience_id, 1);
  }
}

export async function emitSubscriberEvents(
  tx: Executor,
  workspaceId: string,
  type: 'subscriber.created' | 'subscriber.deleted',
  contact: ContactRow,
  memberships: ReadonlyArray<{ audience: AudienceRef; subscriber: SubscriberRow }>,
): Promise<void> {
  for (const { audience, subscriber } of memberships)
    await emitEvent(tx, workspaceId, type, subscriberObject(subscriber, audience, contact));
}
