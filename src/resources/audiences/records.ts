// Audience and subscriber rows: lookups and the objects of the API and of event payloads
// (https://emailit.com/docs/audiences.md, https://emailit.com/docs/webhooks/event-types.md).
import type { Selectable } from 'kysely';
import type { Executor } from '../../platform/db/database.ts';
import { looksLikeId } from '../../platform/ids.ts';
import { preparedQuery } from '../../platform/db/prepared.ts';
import type { AudiencesTable, SubscribersTable } from './tables.ts';
import type { Database } from '../../platform/db/schema.ts';

export type AudienceRow = Selectable<AudiencesTable>;
export type SubscriberRow = Selectable<SubscribersTable>;
/** Contact rows as the query builder knows them (contacts/tables.ts declares the table). */
type ContactRow = Selectable<Database['contacts']>;

/** What a confirmation or double opt-in email says. */
export interface AudienceEmailSettings {
  from: string | null;
  reply_to: string | null;
  subject: string | null;
  design: 'default' | 'custom';
  heading: string | null;
  body: string | null;
  button_label: string | null;
  footer: string | null;
}

export interface DoubleOptInSettings {
  enabled: boolean;
  redirect_url: string | null;
  email: AudienceEmailSettings;
}

export interface ConfirmationEmailSettings {
  enabled: boolean;
  email: AudienceEmailSettings & { button_url: string | null };
}

/** Stored settings of an audience (already checked by the caller). */
export interface AudienceSettings {
  visibility?: 'public' | 'private';
  public_name?: string | null;
  public_description?: string | null;
  double_opt_in?: object | null;
  confirmation_email?: object | null;
  unengaged?: object | null;
}

export interface UnengagedSettings {
  exclude: boolean;
  days: number;
}

export const defaultEmailSettings = (): AudienceEmailSettings => ({
  from: null,
  reply_to: null,
  subject: null,
  design: 'default',
  heading: null,
  body: null,
  button_label: null,
  footer: null,
});

export function doubleOptInOf(row: AudienceRow): DoubleOptInSettings {
  const stored = row.double_opt_in ? (JSON.parse(row.double_opt_in) as Partial<DoubleOptInSettings>) : {};
  return {
    enabled: stored.enabled ?? false,
    redirect_url: stored.redirect_url ?? null,
    email: { ...defaultEmailSettings(), ...stored.email },
  };
}

export function confirmationEmailOf(row: AudienceRow): ConfirmationEmailSettings {
  const stored = row.confirmation_email ? (JSON.parse(row.confirmation_email) as Partial<ConfirmationEmailSettings>) : {};
  return { enabled: stored.enabled ?? false, email: { ...defaultEmailSettings(), button_url: null, ...stored.email } };
}

export function unengagedOf(row: AudienceRow): UnengagedSettings {
  const stored = row.unengaged ? (JSON.parse(row.unengaged) as Partial<UnengagedSettings>) : {};
  return { exclude: stored.exclude ?? false, days: stored.days ?? 90 };
}

/** The v2 audience object. */
export function audienceObject(row: AudienceRow) {
  return {
    object: 'audience' as const,
    id: row.id,
    name: row.name,
    token: row.token,
    subscribers_count: row.subscriber_count,
    visibility: row.visibility as 'public' | 'private',
    public_name: row.public_name,
    public_description: row.public_description,
    double_opt_in: doubleOptInOf(row),
    confirmation_email: confirmationEmailOf(row),
    unengaged: unengagedOf(row),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The object of audience.* events. */
export function audienceEventObject(row: AudienceRow) {
  return { id: row.id, object: 'audience' as const, name: row.name, created_at: row.created_at, updated_at: row.updated_at };
}

/** The legacy v1 audience: the 16-character id without prefix. */
export function legacyAudienceObject(row: AudienceRow) {
  return {
    id: row.legacy_id,
    name: row.name,
    subscribers_count: row.subscriber_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function customFieldsOf(row: { custom_fields: string }): Record<string, unknown> {
  return JSON.parse(row.custom_fields) as Record<string, unknown>;
}

/** The contact inside a subscriber object. */
export function subscriberContact(contact: ContactRow) {
  return {
    id: contact.id,
    email: contact.email,
    first_name: contact.first_name,
    last_name: contact.last_name,
    custom_fields: customFieldsOf(contact),
  };
}

/** The subscriber object of the API and of subscriber.* events. */
export function subscriberObject(subscriber: SubscriberRow, audience: { id: string; name: string }, contact: ContactRow) {
  return {
    id: subscriber.id,
    object: 'subscriber' as const,
    subscribed: subscriber.subscribed === 1,
    subscribed_at: subscriber.subscribed_at,
    unsubscribed_at: subscriber.unsubscribed_at,
    audience: { id: audience.id, name: audience.name },
    contact: subscriberContact(contact),
    created_at: subscriber.created_at,
    updated_at: subscriber.updated_at,
  };
}

export type Subscriber = ReturnType<typeof subscriberObject>;

const audienceById = preparedQuery((db, p: { workspaceId: string; id: string }) =>
  db.selectFrom('audiences').selectAll().where('workspace_id', '=', p.workspaceId).where('id', '=', p.id),
);

/** The workspace's audience named by an `aud_` id or its name (names are accepted in paths). */
export async function findAudience(db: Executor, workspaceId: string, idOrName: string): Promise<AudienceRow | undefined> {
  if (looksLikeId(idOrName, 'aud')) {
    const [row] = await audienceById(db, { workspaceId, id: idOrName });
    if (row) return row;
  }
  return db.selectFrom('audiences').selectAll().where('workspace_id', '=', workspaceId).where('name', '=', idOrName).executeTakeFirst();
}

/** The workspace's audience by its v1 id (16 characters) or its name. */
export async function findLegacyAudience(db: Executor, workspaceId: string, idOrName: string): Promise<AudienceRow | undefined> {
  const byId = await db
    .selectFrom('audiences')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('legacy_id', '=', idOrName)
    .executeTakeFirst();
  return (
    byId ?? db.selectFrom('audiences').selectAll().where('workspace_id', '=', workspaceId).where('name', '=', idOrName).executeTakeFirst()
  );
}

/** Any workspace's audience by its public token (hosted pages, the v1 subscribe call). */
export function findAudienceByToken(db: Executor, token: string): Promise<AudienceRow | undefined> {
  return db.selectFrom('audiences').selectAll().where('token', '=', token).executeTakeFirst();
}

/** The workspace's audiences among `ids` (others, and ids of other workspaces, left out). */
export async function audiencesAmong(db: Executor, workspaceId: string, ids: readonly string[]): Promise<AudienceRow[]> {
  const wanted = [...new Set(ids)].filter((id) => looksLikeId(id, 'aud'));
  if (wanted.length === 0) return [];
  return db.selectFrom('audiences').selectAll().where('workspace_id', '=', workspaceId).where('id', 'in', wanted).orderBy('id').execute();
}

export interface Membership {
  subscriber: SubscriberRow;
  audience: { id: string; name: string };
}

/** Each contact's memberships, by audience name. */
export async function membershipsOf(db: Executor, workspaceId: string, contactIds: readonly string[]): Promise<Map<string, Membership[]>> {
  const out = new Map<string, Membership[]>(contactIds.map((id) => [id, []]));
  for (let i = 0; i < contactIds.length; i += 500) {
    const rows = await db
      .selectFrom('subscribers as s')
      .innerJoin('audiences as a', 'a.id', 's.audience_id')
      .selectAll('s')
      .select(['a.name as audience_name'])
      .where('s.workspace_id', '=', workspaceId)
      .where('s.contact_id', 'in', contactIds.slice(i, i + 500))
      .orderBy('a.name')
      .orderBy('a.id')
      .execute();
    for (const { audience_name, ...subscriber } of rows) {
      out.get(subscriber.contact_id)?.push({ subscriber, audience: { id: subscriber.audience_id, name: audience_name } });
    }
  }
  return out;
}
