// Contacts (docs/api.md, "Contacts, audiences and subscribers"): the rules of create, update,
// delete and unsubscribe, each usable inside a caller's transaction (an `Executor`) so that
// campaigns, automations, the audiences API and the hosted pages compose them with their own
// writes. Every change emits its contact.* and subscriber.* events in that same transaction.
import type { Db, Executor } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { groupCommit } from '../../platform/db/group-commit.ts';
import { newId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { ApiError, conflictError, plainError } from '../../platform/http/errors.ts';
import { requireAddress } from '../../platform/addresses.ts';
import { validateCustomFields } from '../custom-fields/service.ts';
import {
  audiencesAmong,
  deleteMemberships,
  emitSubscriberEvents,
  insertMemberships,
  setSubscribed,
  type Membership,
} from '../audiences/index.ts';
import {
  contactEventObject,
  contactObject,
  customFieldsOf,
  detailedContactObject,
  findContact,
  membershipsOf,
  type ContactRow,
} from './records.ts';

export {
  contactEventObject,
  contactObject,
  customFieldsOf,
  detailedContactObject,
  findContact,
  findContactByEmail,
  findContactById,
  membershipsOf,
  type Contact,
  type ContactRow,
  type DetailedContact,
  type Membership,
} from './records.ts';

const NOT_FOUND = 'Contact not found';
const DUPLICATE = 'A contact with this email already exists';
const EMAIL_TAKEN = 'This email belongs to another contact';

export interface ContactFields {
  first_name?: string | null;
  last_name?: string | null;
  custom_fields?: Record<string, unknown>;
}

export interface CreateContactInput extends ContactFields {
  email: string;
  unsubscribed?: boolean;
  /** `aud_` ids; ids that are not the workspace's audiences are skipped. */
  audiences?: string[];
}

export interface ContactWithMemberships {
  contact: ContactRow;
  memberships: Membership[];
}

/** The contact a path names (`con_` id or address), or the spec's 404. */
export async function requireContact(db: Executor, workspaceId: string, idOrEmail: string): Promise<ContactRow> {
  const row = await findContact(db, workspaceId, idOrEmail);
  if (!row) throw plainError(404, NOT_FOUND);
  return row;
}

async function withMemberships(db: Executor, workspaceId: string, contact: ContactRow): Promise<ContactWithMemberships> {
  return { contact, memberships: (await membershipsOf(db, workspaceId, [contact.id])).get(contact.id) ?? [] };
}

/**
 * Creates a contact, subscribed to the given audiences (unsubscribed memberships when the
 * contact is created unsubscribed): `contact.created`, then `subscriber.created` per audience.
 * 400 for a bad address or field value, 409 `{error, existing}` for a taken address, 422
 * `{error, usage}` when an audience is full (the caller's transaction then rolls back).
 */
export async function createContact(tx: Executor, workspaceId: string, input: CreateContactInput): Promise<ContactWithMemberships> {
  const email = requireAddress(input.email);
  const customFields = await validateCustomFields(tx, workspaceId, input.custom_fields ?? {});
  const existing = await findContact(tx, workspaceId, email);
  if (existing)
    throw conflictError(DUPLICATE, contactObject(existing, (await membershipsOf(tx, workspaceId, [existing.id])).get(existing.id) ?? []));
  const now = nowIso();
  const contact: ContactRow = {
    id: newId('con'),
    workspace_id: workspaceId,
    email,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    custom_fields: JSON.stringify(customFields),
    unsubscribed: input.unsubscribed ? 1 : 0,
    created_at: now,
    updated_at: now,
  };
  await tx.insertInto('contacts').values(contact).execute();
  const audiences = await audiencesAmong(tx, workspaceId, input.audiences ?? []);
  const added = await insertMemberships(tx, workspaceId, contact, audiences, !input.unsubscribed);
  const { memberships } = await withMemberships(tx, workspaceId, contact);
  await emitEvent(tx, workspaceId, 'contact.created', contactEventObject(contact, memberships));
  await emitSubscriberEvents(tx, workspaceId, 'subscriber.created', contact, added);
  return { contact, memberships };
}

/** createContact in a transaction of its own, a concurrent create of the address being the 409.
 *  Run by groupCommit: on PostgreSQL the audiences' subscriber counts, which every add to the
 *  same audience updates, are written with the COMMIT (measured: 50-65 % of sessions adding
 *  contacts waited on that row lock when it was taken first and held over later round trips). */
export async function createContactNow(db: Db, workspaceId: string, input: CreateContactInput): Promise<ContactWithMemberships> {
  try {
    return await groupCommit(db, (tx) => createContact(tx, workspaceId, input));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const existing = await findContact(db, workspaceId, input.email);
    if (!existing) throw error;
    throw conflictError(DUPLICATE, contactObject(existing, (await membershipsOf(db, workspaceId, [existing.id])).get(existing.id) ?? []));
  }
}

/**
 * The contact with this address, created when missing (`contact.created`). With `overwrite`,
 * the given names and custom fields replace an existing contact's (`contact.updated`).
 */
export async function findOrCreateContact(
  tx: Executor,
  workspaceId: string,
  input: ContactFields & { email: string },
  options: { overwrite?: boolean } = {},
): Promise<{ contact: ContactRow; created: boolean }> {
  const email = requireAddress(input.email);
  let existing = await findContact(tx, workspaceId, email);
  if (!existing) {
    try {
      return { contact: (await createContact(tx, workspaceId, { ...input, email })).contact, created: true };
    } catch (error) {
      // Another request committed the address since the look-up above (PostgreSQL reads each
      // statement afresh): createContact's own check refused it before writing, so it is found.
      if (!(error instanceof ApiError && error.status === 409)) throw error;
      existing = await findContact(tx, workspaceId, email);
      if (!existing) throw error;
    }
  }
  if (!options.overwrite) return { contact: existing, created: false };
  const { first_name, last_name, custom_fields } = input;
  return { contact: await updateContact(tx, workspaceId, existing, { first_name, last_name, custom_fields }), created: false };
}

export interface UpdateContactInput extends ContactFields {
  email?: string;
  unsubscribed?: boolean;
  /** Custom fields set one by one, the others kept (automations' edit_contact). */
  merge_custom_fields?: Record<string, unknown>;
  /** The complete list of `aud_` ids: missing memberships added, others removed. */
  audiences?: string[];
}

const CONTACT_FIELDS = ['email', 'first_name', 'last_name', 'custom_fields', 'unsubscribed'] as const;

/**
 * Applies the given fields. `contact.updated` carries `previous` with the old value of each
 * changed field; membership changes emit `subscriber.created` / `subscriber.deleted` after it.
 * Nothing changed: no write, no event. 400 bad value, 409 `{error}` address of another contact.
 */
export async function updateContact(
  tx: Executor,
  workspaceId: string,
  contact: ContactRow,
  input: UpdateContactInput,
): Promise<ContactRow> {
  const next: ContactRow = { ...contact };
  if (input.email !== undefined) next.email = requireAddress(input.email);
  if (input.first_name !== undefined) next.first_name = input.first_name;
  if (input.last_name !== undefined) next.last_name = input.last_name;
  if (input.unsubscribed !== undefined) next.unsubscribed = input.unsubscribed ? 1 : 0;
  if (input.custom_fields !== undefined || input.merge_custom_fields !== undefined) {
    const base = input.custom_fields ?? customFieldsOf(contact);
    const merged = { ...base, ...input.merge_custom_fields };
    next.custom_fields = JSON.stringify(await validateCustomFields(tx, workspaceId, merged));
  }
  if (next.email !== contact.email) {
    const other = await findContact(tx, workspaceId, next.email);
    if (other && other.id !== contact.id) throw plainError(409, EMAIL_TAKEN);
  }

  const before = await withMemberships(tx, workspaceId, contact);
  let added: Awaited<ReturnType<typeof insertMemberships>> = [];
  let removed: Membership[] = [];
  if (input.audiences !== undefined) {
    const wanted = await audiencesAmong(tx, workspaceId, input.audiences);
    const current = new Set(before.memberships.map((m) => m.audience.id));
    const wantedIds = new Set(wanted.map((a) => a.id));
    removed = before.memberships.filter((m) => !wantedIds.has(m.audience.id));
    await deleteMemberships(tx, removed);
    added = await insertMemberships(
      tx,
      workspaceId,
      next,
      wanted.filter((a) => !current.has(a.id)),
      next.unsubscribed === 0,
    );
  }

  const previous: Record<string, unknown> = {};
  const was = contactObject(contact, []);
  const now = contactObject(next, []);
  for (const field of CONTACT_FIELDS) {
    if (JSON.stringify(was[field]) !== JSON.stringify(now[field])) previous[field] = was[field];
  }
  if (Object.keys(previous).length === 0 && added.length === 0 && removed.length === 0) return contact;
  if (added.length > 0 || removed.length > 0) previous.audiences = contactEventObject(contact, before.memberships).audiences;
  next.updated_at = nowIso();
  try {
    await tx
      .updateTable('contacts')
      .set({
        email: next.email,
        first_name: next.first_name,
        last_name: next.last_name,
        custom_fields: next.custom_fields,
        unsubscribed: next.unsubscribed,
        updated_at: next.updated_at,
      })
      .where('id', '=', contact.id)
      .execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw plainError(409, EMAIL_TAKEN);
    throw error;
  }
  const after = await withMemberships(tx, workspaceId, next);
  await emitEvent(tx, workspaceId, 'contact.updated', { ...contactEventObject(next, after.memberships), previous });
  await emitSubscriberEvents(tx, workspaceId, 'subscriber.created', next, added);
  await emitSubscriberEvents(tx, workspaceId, 'subscriber.deleted', contact, removed);
  return next;
}

/**
 * The unsubscribe of campaign mail: the contact is unsubscribed from all campaigns
 * (`contact.updated`), and its memberships of `audienceIds` (the campaign's audiences) are
 * turned off too (`subscriber.updated` each). Idempotent: a second call changes nothing.
 */
export async function unsubscribeContact(
  tx: Executor,
  workspaceId: string,
  contactIdOrEmail: string,
  options: { audienceIds?: readonly string[] } = {},
): Promise<ContactRow> {
  const contact = await requireContact(tx, workspaceId, contactIdOrEmail);
  const updated = await updateContact(tx, workspaceId, contact, { unsubscribed: true });
  if (options.audienceIds?.length) {
    const wanted = new Set(options.audienceIds);
    const { memberships } = await withMemberships(tx, workspaceId, updated);
    for (const { audience, subscriber } of memberships) {
      if (wanted.has(audience.id)) await setSubscribed(tx, workspaceId, audience, updated, subscriber, false);
    }
  }
  return updated;
}

/** Deletes the contact and its memberships: `subscriber.deleted` per membership, then
 *  `contact.deleted`. */
export async function deleteContact(tx: Executor, workspaceId: string, contact: ContactRow) {
  const { memberships } = await withMemberships(tx, workspaceId, contact);
  await deleteMemberships(tx, memberships);
  await tx.deleteFrom('contacts').where('id', '=', contact.id).execute();
  await emitSubscriberEvents(tx, workspaceId, 'subscriber.deleted', contact, memberships);
  await emitEvent(tx, workspaceId, 'contact.deleted', contactEventObject(contact, memberships));
  return { object: 'contact' as const, id: contact.id, email: contact.email, deleted: true as const };
}

/** The retrieve/update object of a contact. */
export async function contactDetails(db: Executor, workspaceId: string, contact: ContactRow) {
  const { memberships } = await withMemberships(db, workspaceId, contact);
  return detailedContactObject(contact, memberships);
}
