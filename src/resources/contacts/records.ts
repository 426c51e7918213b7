// Contact rows: lookups and the contact object of the API and of contact.* event payloads
// (docs/api.md, https://emailit.com/docs/webhooks/event-types.md).
import type { Selectable } from 'kysely';
import type { Executor } from '../../platform/db/database.ts';
import { looksLikeId } from '../../platform/ids.ts';
import { preparedQuery } from '../../platform/db/prepared.ts';
import { customFieldsOf, type Membership } from '../audiences/index.ts';
import { normalizeAddress } from '../../platform/addresses.ts';
import type { ContactsTable } from './tables.ts';

export { customFieldsOf, membershipsOf, type Membership } from '../audiences/index.ts';

export type ContactRow = Selectable<ContactsTable>;

const contactById = preparedQuery((db, p: { workspaceId: string; id: string }) =>
  db.selectFrom('contacts').selectAll().where('workspace_id', '=', p.workspaceId).where('id', '=', p.id),
);
const contactByEmail = preparedQuery((db, p: { workspaceId: string; email: string }) =>
  db.selectFrom('contacts').selectAll().where('workspace_id', '=', p.workspaceId).where('email', '=', p.email),
);

export async function findContactById(db: Executor, workspaceId: string, id: string): Promise<ContactRow | undefined> {
  const [row] = await contactById(db, { workspaceId, id });
  return row;
}

/** By address, compared in lowercase. */
export async function findContactByEmail(db: Executor, workspaceId: string, email: string): Promise<ContactRow | undefined> {
  const [row] = await contactByEmail(db, { workspaceId, email: email.trim().toLowerCase() });
  return row;
}

/** By `con_` id or email address (a path names a contact either way). */
export async function findContact(db: Executor, workspaceId: string, idOrEmail: string): Promise<ContactRow | undefined> {
  if (looksLikeId(idOrEmail, 'con')) return findContactById(db, workspaceId, idOrEmail);
  const address = normalizeAddress(idOrEmail);
  return address === null ? undefined : findContactByEmail(db, workspaceId, address);
}

/** Create and list responses: audiences as `id, name, subscribed`. */
export function contactObject(row: ContactRow, memberships: Membership[]) {
  return {
    object: 'contact' as const,
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    custom_fields: customFieldsOf(row),
    unsubscribed: row.unsubscribed === 1,
    audiences: memberships.map(({ audience, subscriber }) => ({
      id: audience.id,
      name: audience.name,
      subscribed: subscriber.subscribed === 1,
    })),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Retrieve and update responses: audiences with their `subscriber` object. */
export function detailedContactObject(row: ContactRow, memberships: Membership[]) {
  return {
    ...contactObject(row, []),
    audiences: memberships.map(({ audience, subscriber }) => ({
      id: audience.id,
      name: audience.name,
      subscriber: {
        id: subscriber.id,
        subscribed: subscriber.subscribed === 1,
        subscribed_at: subscriber.subscribed_at,
        unsubscribed_at: subscriber.unsubscribed_at,
        created_at: subscriber.created_at,
        updated_at: subscriber.updated_at,
      },
    })),
  };
}

export type Contact = ReturnType<typeof contactObject>;
export type DetailedContact = ReturnType<typeof detailedContactObject>;

/** The object of contact.* events. */
export function contactEventObject(row: ContactRow, memberships: Membership[]) {
  return {
    id: row.id,
    object: 'contact' as const,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    custom_fields: customFieldsOf(row),
    unsubscribed: row.unsubscribed === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
    audiences: memberships.map(({ audience, subscriber }) => ({
      id: audience.id,
      subscriber: {
        id: subscriber.id,
        subscribed: subscriber.subscribed === 1,
        subscribed_at: subscriber.subscribed_at,
        unsubscribed_at: subscriber.unsubscribed_at,
      },
    })),
  };
}
