// Audiences and their subscribers (https://emailit.com/docs/audiences.md): the rules other
// resources call, each taking the caller's transaction (`Executor`) so they compose with its own
// writes.
// - create/update/delete an audience (`audience.*` events; delete removes its subscribers
//   and keeps the contacts),
// - add a subscriber by address (creates or updates the contact; cap; resubscribe),
// - the recipients query of campaigns.
import type { Db, Executor } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { newId, randomAlphanumeric } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { conflictError, plainError } from '../../platform/http/errors.ts';
import { findContact, findOrCreateContact, type ContactFields } from '../contacts/service.ts';
import {
  audienceEventObject,
  audienceObject,
  findAudience,
  type AudienceRow,
  type AudienceSettings,
  type SubscriberRow,
} from './records.ts';
import {
  subscribeContact,
  setSubscribed,
  deleteSubscriber,
  findMembership,
  removeContactFromAudience,
  type SubscribeOutcome,
} from './subscribers.ts';
import { usageOf, workspacePlan, type Usage } from './caps.ts';

export * from './records.ts';
export {
  subscribeContact,
  setSubscribed,
  deleteSubscriber,
  findMembership,
  removeContactFromAudience,
  insertMemberships,
  type SubscribeOutcome,
} from './subscribers.ts';
export { UsageError } from './schemas.ts';
export { answerErrorsAsPages, messagePage, PAGE_BODY_LIMIT, sendPage } from './pages.ts';
export { SUBSCRIBER_LIMITS, subscriberLimitError, takeSubscriberPlaces, releaseSubscriberPlaces, usageOf, type Usage } from './caps.ts';

const NOT_FOUND = 'Audience not found';
const DUPLICATE = 'An audience with this name already exists';

/** The audience a path names (`aud_` id or name), or 404 `{error}`. */
export async function requireAudience(db: Executor, workspaceId: string, idOrName: string): Promise<AudienceRow> {
  const row = await findAudience(db, workspaceId, idOrName);
  if (!row) throw plainError(404, NOT_FOUND);
  return row;
}

function settingsColumns(settings: AudienceSettings): Partial<AudienceRow> {
  const out: Partial<AudienceRow> = {};
  if (settings.visibility !== undefined) out.visibility = settings.visibility;
  if (settings.public_name !== undefined) out.public_name = settings.public_name;
  if (settings.public_description !== undefined) out.public_description = settings.public_description;
  if (settings.double_opt_in !== undefined)
    out.double_opt_in = settings.double_opt_in === null ? null : JSON.stringify(settings.double_opt_in);
  if (settings.confirmation_email !== undefined)
    out.confirmation_email = settings.confirmation_email === null ? null : JSON.stringify(settings.confirmation_email);
  if (settings.unengaged !== undefined) out.unengaged = settings.unengaged === null ? null : JSON.stringify(settings.unengaged);
  return out;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw plainError(400, 'name is required');
  if (trimmed.length > 191) throw plainError(400, 'name must be at most 191 characters');
  return trimmed;
}

/** A new audience (`audience.created`); 409 `{error, existing}` when the name is taken. */
export async function createAudience(tx: Executor, workspaceId: string, input: { name: string } & AudienceSettings): Promise<AudienceRow> {
  const name = checkName(input.name);
  const existing = await findAudienceByName(tx, workspaceId, name);
  if (existing) throw conflictError(DUPLICATE, audienceObject(existing));
  const now = nowIso();
  const row: AudienceRow = {
    id: newId('aud'),
    workspace_id: workspaceId,
    name,
    legacy_id: randomAlphanumeric(16),
    token: randomAlphanumeric(32),
    visibility: 'private',
    public_name: null,
    public_description: null,
    double_opt_in: null,
    confirmation_email: null,
    unengaged: null,
    subscriber_count: 0,
    created_at: now,
    updated_at: now,
    ...settingsColumns(input),
  };
  await tx.insertInto('audiences').values(row).execute();
  await emitEvent(tx, workspaceId, 'audience.created', audienceEventObject(row));
  return row;
}

/** createAudience in its own transaction; a concurrent create of the name is the 409. */
export async function createAudienceNow(db: Db, workspaceId: string, input: { name: string } & AudienceSettings): Promise<AudienceRow> {
  try {
    return await db.transaction().execute((tx) => createAudience(tx, workspaceId, input));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const existing = await findAudienceByName(db, workspaceId, input.name.trim());
    throw existing ? conflictError(DUPLICATE, audienceObject(existing)) : plainError(409, DUPLICATE);
  }
}

function findAudienceByName(db: Executor, workspaceId: string, name: string) {
  return db.selectFrom('audiences').selectAll().where('workspace_id', '=', workspaceId).where('name', '=', name).executeTakeFirst();
}

/** Renames and/or changes settings (`audience.updated`); 409 `{error}` for a taken name. */
export async function updateAudience(
  tx: Executor,
  workspaceId: string,
  audience: AudienceRow,
  input: { name?: string } & AudienceSettings,
): Promise<AudienceRow> {
  const changes: Partial<AudienceRow> = settingsColumns(input);
  if (input.name !== undefined) {
    const name = checkName(input.name);
    if (name !== audience.name) {
      const other = await findAudienceByName(tx, workspaceId, name);
      if (other) throw plainError(409, DUPLICATE);
      changes.name = name;
    }
  }
  const next: AudienceRow = { ...audience, ...changes, updated_at: nowIso() };
  try {
    await tx
      .updateTable('audiences')
      .set({ ...changes, updated_at: next.updated_at })
      .where('id', '=', audience.id)
      .execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw plainError(409, DUPLICATE);
    throw error;
  }
  await emitEvent(tx, workspaceId, 'audience.updated', audienceEventObject(next));
  return next;
}

/** Deletes the audience with its subscribers and pending confirmations; contacts stay.
 *  One `audience.deleted` (no event per subscriber: an audience may hold a million). */
export async function deleteAudience(tx: Executor, workspaceId: string, audience: AudienceRow): Promise<void> {
  await tx.deleteFrom('subscribers').where('audience_id', '=', audience.id).execute();
  await tx.deleteFrom('subscription_confirmations').where('audience_id', '=', audience.id).execute();
  await tx.deleteFrom('audiences').where('id', '=', audience.id).execute();
  await emitEvent(tx, workspaceId, 'audience.deleted', audienceEventObject(audience));
}

export interface AddSubscriberInput extends ContactFields {
  email: string;
}

/**
 * Adds an address to an audience : the contact is created when missing, or its
 * sent names and custom fields overwrite; a new membership (`subscriber.created`) or a
 * resubscribed one (`subscriber.updated` + `subscriber.resubscribed`). Already subscribed:
 * outcome `already_subscribed`, nothing written (the API answers 409). Full: 422 `usage`.
 */
export async function addSubscriber(
  tx: Executor,
  workspaceId: string,
  audience: AudienceRow,
  input: AddSubscriberInput,
  options: { resubscribe?: boolean } = {},
): Promise<{ subscriber: SubscriberRow; outcome: SubscribeOutcome; contactCreated: boolean }> {
  const before = await findContact(tx, workspaceId, input.email);
  if (before) {
    const membership = await findMembership(tx, audience.id, before.id);
    if (membership?.subscribed === 1) return { subscriber: membership, outcome: 'already_subscribed', contactCreated: false };
  }
  const { contact, created } = await findOrCreateContact(tx, workspaceId, input, { overwrite: true });
  const { subscriber, outcome } = await subscribeContact(tx, workspaceId, audience, contact, { resubscribe: options.resubscribe ?? true });
  return { subscriber, outcome, contactCreated: created };
}

/** Subscribers usage of an audience: `{used, limit, plan}` (limit null: unlimited). */
export async function audienceUsage(db: Executor, workspaceId: string, audience: AudienceRow): Promise<Usage> {
  return usageOf(await workspacePlan(db, workspaceId), audience.subscriber_count);
}
