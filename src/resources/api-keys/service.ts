// API keys: https://emailit.com/docs/developers/api-keys.md. The secret is returned only by create
// and regenerate; only its hash is stored.
import type { Selectable } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.ts';
import { dialectOf, isUniqueViolation } from '../../platform/db/database.ts';
import { preparedQuery } from '../../platform/db/prepared.ts';
import type { ApiKeysTable } from '../../platform/db/schema.ts';
import { newId, randomAlphanumeric, looksLikeId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { hashSecret, type Authenticator, type Scope } from '../../platform/http/auth.ts';
import { ApiError, conflictError, plainError } from '../../platform/http/errors.ts';
import { findWorkspaceDomainId } from '../domains/index.ts';
import { applyListQuery, pageLimitList, type ListSpec, type Query } from '../../platform/http/lists.ts';

type ApiKeyRow = Selectable<ApiKeysTable>;

export function apiKeyObject(row: ApiKeyRow, secret?: string) {
  return {
    object: 'api_key' as const,
    id: row.id,
    name: row.name,
    scope: row.scope,
    sending_domain_id: row.sending_domain_id,
    last_used_at: row.last_used_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(secret ? { key: secret } : {}),
  };
}

function newSecret(): string {
  return `secret_${randomAlphanumeric(32)}`;
}

export interface CreateApiKeyInput {
  name: string;
  scope?: Scope;
  sending_domain_id?: string | null;
}

export async function createApiKey(tx: Executor, workspaceId: string, input: CreateApiKeyInput) {
  const scope: Scope = input.scope ?? 'full';
  const name = input.name.trim();
  if (name === '') throw plainError(400, 'name must not be empty');
  let sendingDomainId: string | null = null;
  if (scope === 'sending' && input.sending_domain_id) {
    if ((await findWorkspaceDomainId(tx, workspaceId, input.sending_domain_id)) === null) {
      throw plainError(400, `Sending domain ${input.sending_domain_id} is not a domain of this workspace`);
    }
    sendingDomainId = input.sending_domain_id;
  }
  const existing = await findLiveKey(tx, workspaceId, name, 'name');
  if (existing)
    throw conflictError('An API key with this name already exists', { object: 'api_key', id: existing.id, name: existing.name });
  const secret = newSecret();
  const now = nowIso();
  const row: ApiKeyRow = {
    id: newId('key'),
    workspace_id: workspaceId,
    name,
    scope,
    type: 'api',
    sending_domain_id: sendingDomainId,
    key_hash: hashSecret(secret),
    last_used_at: null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  try {
    await tx.insertInto('api_keys').values(row).execute();
  } catch (error) {
    // PostgreSQL has aborted the transaction: nothing more can be read in it, so the error goes
    // up for the caller to run it again (transact), when the check above finds the other key.
    if (isUniqueViolation(error) && dialectOf(tx) !== 'postgres') throw await nameConflict(tx, workspaceId, name);
    throw error;
  }
  return { ...apiKeyObject(row, secret), key: secret };
}

async function nameConflict(tx: Executor, workspaceId: string, name: string): Promise<ApiError> {
  const existing = await findLiveKey(tx, workspaceId, name, 'name');
  return conflictError(
    'An API key with this name already exists',
    existing ? { object: 'api_key', id: existing.id, name: existing.name } : { object: 'api_key', name },
  );
}

const liveKeyBy = {
  id: preparedQuery((db, p: { workspaceId: string; value: string }) =>
    db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', p.workspaceId)
      .where('id', '=', p.value)
      .where('deleted_at', 'is', null),
  ),
  name: preparedQuery((db, p: { workspaceId: string; value: string }) =>
    db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', p.workspaceId)
      .where('name', '=', p.value)
      .where('deleted_at', 'is', null),
  ),
};

async function findLiveKey(db: Executor, workspaceId: string, value: string, by: 'id' | 'name'): Promise<ApiKeyRow | undefined> {
  const [row] = await liveKeyBy[by](db, { workspaceId, value });
  return row;
}

/** The live key a path identifier names: its `key_` id, else its name. */
async function resolveKey(db: Executor, workspaceId: string, idOrName: string): Promise<ApiKeyRow> {
  const row =
    (looksLikeId(idOrName, 'key') ? await findLiveKey(db, workspaceId, idOrName, 'id') : undefined) ??
    (await findLiveKey(db, workspaceId, idOrName, 'name'));
  if (!row) throw plainError(404, 'API key not found');
  return row;
}

export async function getApiKey(db: Db, workspaceId: string, idOrName: string) {
  return apiKeyObject(await resolveKey(db, workspaceId, idOrName));
}

const listSpec: ListSpec = {
  fields: {
    name: { type: 'string' },
    scope: { type: 'enum', values: ['full', 'sending', 'events'] },
    type: { type: 'enum', values: ['api'] },
    created_at: { type: 'date' },
  },
  extraSortKeys: { updated_at: 'updated_at', last_used_at: 'last_used_at' },
  searchColumns: ['name'],
  sortConvention: 'order-direction',
};

export async function listApiKeys(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const base = db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null);
  return pageLimitList(applyListQuery(base, query, listSpec), query, requestUrl, 10, (row) => apiKeyObject(row));
}

export async function renameApiKey(db: Db, workspaceId: string, idOrName: string, name: string) {
  const newName = name.trim();
  if (newName === '') throw plainError(400, 'name must not be empty');
  return db.transaction().execute(async (tx) => {
    const row = await resolveKey(tx, workspaceId, idOrName);
    const clash = await findLiveKey(tx, workspaceId, newName, 'name');
    if (clash && clash.id !== row.id) throw plainError(409, 'An API key with this name already exists');
    const updatedAt = nowIso();
    try {
      await tx.updateTable('api_keys').set({ name: newName, updated_at: updatedAt }).where('id', '=', row.id).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw plainError(409, 'An API key with this name already exists');
      throw error;
    }
    return apiKeyObject({ ...row, name: newName, updated_at: updatedAt });
  });
}

export async function regenerateApiKey(db: Db, auth: Authenticator, workspaceId: string, idOrName: string) {
  const row = await resolveKey(db, workspaceId, idOrName);
  const secret = newSecret();
  const updatedAt = nowIso();
  await db
    .updateTable('api_keys')
    .set({ key_hash: hashSecret(secret), last_used_at: null, updated_at: updatedAt })
    .where('id', '=', row.id)
    .execute();
  auth.forgetKey(row.id);
  return apiKeyObject({ ...row, last_used_at: null, updated_at: updatedAt }, secret);
}

export async function deleteApiKey(db: Db, auth: Authenticator, workspaceId: string, idOrName: string) {
  const row = await resolveKey(db, workspaceId, idOrName);
  const deletedAt = nowIso();
  // The hash is replaced too, so that the secret can never match again.
  await db
    .updateTable('api_keys')
    .set({ deleted_at: deletedAt, updated_at: deletedAt, key_hash: `deleted:${row.id}` })
    .where('id', '=', row.id)
    .execute();
  auth.forgetKey(row.id);
  return { object: 'api_key' as const, id: row.id, name: row.name, deleted: true };
}
