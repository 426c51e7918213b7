// Workspace event definitions: create, list, get, update, delete
// (https://emailit.com/docs/api-reference/workspace-events/). A definition's name is unique in
// its workspace; definitions and custom types together count against the plan's event types.
import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { newId, looksLikeId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { conflictError, fieldValidationError, plainError } from '../../platform/http/errors.ts';
import { applyListQuery, pageLimitList, type ListSpec, type Query } from '../../platform/http/lists.ts';
import type { EventDefinitionsTable } from './tables.ts';
import {
  addProblem,
  checkPropertyDefinitions,
  definitionName,
  PLAN_EVENT_TYPES,
  type PropertyDefinition,
  type Problems,
} from './definitions.ts';
import { countEventTypes, requireEventsPlan, typeLimitError } from './service.ts';

type DefinitionRow = Selectable<EventDefinitionsTable>;

export interface DefinitionInput {
  name?: string;
  title?: string | null;
  description?: string | null;
  properties?: unknown;
}

export function definitionObject(row: DefinitionRow) {
  return {
    object: 'workspace_event' as const,
    id: row.id,
    name: row.name,
    type: `w:${row.name}`,
    title: row.title,
    description: row.description,
    properties: JSON.parse(row.properties) as PropertyDefinition[],
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function fail(problems: Problems): void {
  if (Object.keys(problems).length > 0) throw fieldValidationError(problems);
}

export async function createDefinition(db: Db, workspaceId: string, input: DefinitionInput) {
  const problems: Problems = {};
  const name = definitionName(input.name ?? '');
  if (name === null)
    addProblem(
      problems,
      'name',
      'The name has 1 to 100 letters, digits, ., - or _, and starts with a letter or digit (w: prefix optional).',
    );
  const properties = checkPropertyDefinitions(input.properties, problems);
  fail(problems);
  return db.transaction().execute(async (tx) => {
    const { plan } = await requireEventsPlan(tx, workspaceId);
    const existing = await tx
      .selectFrom('event_definitions')
      .select(['id', 'name'])
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name!)
      .executeTakeFirst();
    if (existing)
      throw conflictError('A workspace event with this name already exists', {
        object: 'workspace_event',
        id: existing.id,
        name: existing.name,
      });
    const limit = PLAN_EVENT_TYPES[plan] ?? 0;
    if (Number.isFinite(limit) && (await countEventTypes(tx, workspaceId)) >= limit) throw typeLimitError(limit);
    const now = nowIso();
    const row: DefinitionRow = {
      id: newId('wev'),
      workspace_id: workspaceId,
      name: name!,
      title: input.title ?? null,
      description: input.description ?? null,
      properties: JSON.stringify(properties),
      created_at: now,
      updated_at: now,
    };
    try {
      await tx.insertInto('event_definitions').values(row).execute();
    } catch (error) {
      if (isUniqueViolation(error))
        throw conflictError('A workspace event with this name already exists', { object: 'workspace_event', name: row.name });
      throw error;
    }
    return definitionObject(row);
  });
}

/** The definition a path names: its wev_ id, its name, or its type (w:<name>). */
async function findDefinition(db: Db, workspaceId: string, idOrName: string): Promise<DefinitionRow> {
  const base = db.selectFrom('event_definitions').selectAll().where('workspace_id', '=', workspaceId);
  const row = looksLikeId(idOrName, 'wev')
    ? await base.where('id', '=', idOrName).executeTakeFirst()
    : await base.where('name', '=', idOrName.startsWith('w:') ? idOrName.slice(2) : idOrName).executeTakeFirst();
  if (!row) throw plainError(404, 'Workspace event not found');
  return row;
}

export async function getDefinition(db: Db, workspaceId: string, idOrName: string) {
  return definitionObject(await findDefinition(db, workspaceId, idOrName));
}

const listSpec: ListSpec = {
  fields: { name: { type: 'string' }, created_at: { type: 'date' } },
  extraSortKeys: { updated_at: 'updated_at' },
  searchColumns: ['name', 'title'],
  sortConvention: 'order-direction',
};

export async function listDefinitions(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const base = db.selectFrom('event_definitions').selectAll().where('workspace_id', '=', workspaceId);
  return pageLimitList(applyListQuery(base, query, listSpec), query, requestUrl, 25, definitionObject);
}

/** Changes the title, description or properties; the name stays (events already sent carry it).
 *  Events recorded before keep the properties they were recorded with. */
export async function updateDefinition(db: Db, workspaceId: string, idOrName: string, input: DefinitionInput) {
  const row = await findDefinition(db, workspaceId, idOrName);
  const problems: Problems = {};
  const properties = input.properties === undefined ? null : checkPropertyDefinitions(input.properties, problems);
  fail(problems);
  const changes = {
    ...(input.title !== undefined ? { title: input.title } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(properties ? { properties: JSON.stringify(properties) } : {}),
    updated_at: nowIso(),
  };
  await db.updateTable('event_definitions').set(changes).where('id', '=', row.id).execute();
  return definitionObject({ ...row, ...changes });
}

/** Deletes a definition: later w: events of its name are refused; recorded ones stay. */
export async function deleteDefinition(db: Db, workspaceId: string, idOrName: string) {
  const row = await findDefinition(db, workspaceId, idOrName);
  await db.deleteFrom('event_definitions').where('id', '=', row.id).execute();
  return { object: 'workspace_event' as const, id: row.id, name: row.name, deleted: true as const };
}
