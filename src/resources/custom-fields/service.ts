// Custom field definitions: a workspace declares its fields (key, label, type) so that their
// values are checked (values.ts), automations' date triggers know which fields hold dates and
// campaign merge tags (`{{cf.<key>}}`) know what exists. Values of undeclared keys are kept as
// given. An API of ours under /v2/custom-fields (the spec shows none).
import type { Selectable } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { newId, looksLikeId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { conflictError, plainError } from '../../platform/http/errors.ts';
import { applyListQuery, pageLimitList, type ListSpec, type Query } from '../../platform/http/lists.ts';
import { checkFieldValues, FIELD_TYPES, type FieldDefinition, type FieldDefinitions, type FieldType } from './values.ts';
import type { CustomFieldsTable } from './tables.ts';

export {
  checkFieldValue,
  checkFieldValues,
  isIsoDate,
  FIELD_TYPES,
  type FieldDefinition,
  type FieldDefinitions,
  type FieldType,
} from './values.ts';

type FieldRow = Selectable<CustomFieldsTable>;

export type CustomField = {
  object: 'custom_field';
  id: string;
  key: string;
  label: string;
  type: FieldType;
  created_at: string;
  updated_at: string;
};

export function customFieldObject(row: FieldRow): CustomField {
  return {
    object: 'custom_field',
    id: row.id,
    key: row.key,
    label: row.label,
    type: row.type as FieldType,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export const FIELD_KEY = /^[A-Za-z0-9_]{1,64}$/;
const NOT_FOUND = 'Custom field not found';

/** The workspace's definitions by key. */
export async function fieldDefinitions(db: Executor, workspaceId: string): Promise<FieldDefinitions> {
  const rows = await db.selectFrom('custom_fields').select(['key', 'type']).where('workspace_id', '=', workspaceId).execute();
  return new Map(rows.map((row) => [row.key, { key: row.key, type: row.type as FieldType } satisfies FieldDefinition]));
}

/** Keys of the workspace's fields of type date (automations' date triggers). */
export async function dateFieldKeys(db: Executor, workspaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('custom_fields')
    .select('key')
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', 'date')
    .orderBy('key')
    .execute();
  return rows.map((row) => row.key);
}

/** `values` checked against the workspace's definitions; 400 `{error}` naming the first bad one. */
export async function validateCustomFields(
  db: Executor,
  workspaceId: string,
  values: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (Object.keys(values).length === 0) return {};
  const checked = checkFieldValues(await fieldDefinitions(db, workspaceId), values);
  if ('error' in checked) throw plainError(400, checked.error);
  return checked.values;
}

export interface CreateFieldInput {
  key: string;
  label?: string;
  type: FieldType;
}

export async function createCustomField(db: Db, workspaceId: string, input: CreateFieldInput): Promise<CustomField> {
  if (!FIELD_KEY.test(input.key)) throw plainError(400, 'Invalid key: use 1 to 64 letters, digits or underscores');
  if (!(FIELD_TYPES as readonly string[]).includes(input.type)) throw plainError(400, `Invalid type: use ${FIELD_TYPES.join(', ')}`);
  const now = nowIso();
  const row: FieldRow = {
    id: newId('fld'),
    workspace_id: workspaceId,
    key: input.key,
    label: input.label?.trim() || input.key,
    type: input.type,
    created_at: now,
    updated_at: now,
  };
  try {
    await db.insertInto('custom_fields').values(row).execute();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const existing = await findField(db, workspaceId, input.key);
    throw conflictError('A custom field with this key already exists', existing ? customFieldObject(existing) : {});
  }
  return customFieldObject(row);
}

export async function getCustomField(db: Executor, workspaceId: string, idOrKey: string): Promise<CustomField> {
  return customFieldObject(await requireField(db, workspaceId, idOrKey));
}

/** Only the label changes: a type change would make stored values wrong. */
export async function updateCustomField(db: Db, workspaceId: string, idOrKey: string, input: { label?: string }): Promise<CustomField> {
  if (input.label === undefined || input.label.trim() === '') throw plainError(400, 'label is required');
  const row = await requireField(db, workspaceId, idOrKey);
  const next = { ...row, label: input.label.trim(), updated_at: nowIso() };
  await db.updateTable('custom_fields').set({ label: next.label, updated_at: next.updated_at }).where('id', '=', row.id).execute();
  return customFieldObject(next);
}

/** Deletes the definition; contacts keep their values (as undeclared keys). */
export async function deleteCustomField(db: Db, workspaceId: string, idOrKey: string) {
  const row = await requireField(db, workspaceId, idOrKey);
  await db.deleteFrom('custom_fields').where('id', '=', row.id).execute();
  return { object: 'custom_field' as const, id: row.id, key: row.key, deleted: true as const };
}

const listSpec: ListSpec = {
  fields: { key: { type: 'string' }, label: { type: 'string' }, type: { type: 'enum', values: FIELD_TYPES }, created_at: { type: 'date' } },
  searchColumns: ['key', 'label'],
  sortConvention: 'sort-order',
};

export async function listCustomFields(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const base = db.selectFrom('custom_fields').selectAll().where('workspace_id', '=', workspaceId);
  return pageLimitList(applyListQuery(base, query, listSpec), query, requestUrl, 10, customFieldObject);
}

function findField(db: Executor, workspaceId: string, idOrKey: string) {
  const column = looksLikeId(idOrKey, 'fld') ? 'id' : 'key';
  return db.selectFrom('custom_fields').selectAll().where('workspace_id', '=', workspaceId).where(column, '=', idOrKey).executeTakeFirst();
}

async function requireField(db: Executor, workspaceId: string, idOrKey: string): Promise<FieldRow> {
  const row = await findField(db, workspaceId, idOrKey);
  if (!row) throw plainError(404, NOT_FOUND);
  return row;
}
