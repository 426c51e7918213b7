// Templates (docs/api.md, "Templates and MJML").
// A template is the set of versions sharing an alias; at most one version of an alias is
// published (enforced by a partial unique index). The first version of an alias is published
// at creation, later ones are drafts until published.
import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.ts';
import { dialectOf, isUniqueViolation } from '../../platform/db/database.ts';
import { nowIso } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { newId, looksLikeId } from '../../platform/ids.ts';
import { ApiError, fieldValidationError } from '../../platform/http/errors.ts';
import { applyListQuery, perPageList, type ListSpec, type Query } from '../../platform/http/lists.ts';
import { findTempleErrors } from '../../templating/temple.ts';
import { compileTemplateSource, hasMjmlAccess, mjmlAlphaError, type MjmlDocumentInfo } from '../mjml/service.ts';
import type { TemplatesTable } from './tables.ts';
import './tables.ts';

type TemplateRow = Selectable<TemplatesTable>;

export const EDITORS = ['html', 'text', 'dragit', 'tiptap', 'mjml'] as const;
export type Editor = (typeof EDITORS)[number];
export const ALIAS_PATTERN = /^[a-z0-9_-]+$/;

export interface TemplateInput {
  name?: string;
  alias?: string;
  from?: string | null;
  subject?: string | null;
  reply_to?: string | string[] | null;
  html?: string | null;
  text?: string | null;
  source?: string | Record<string, unknown> | null;
  editor?: Editor;
}

const notFound = () => new ApiError(404, { message: 'Template not found' });

// ---------------------------------------------------------------------------------------
// Objects

export interface TemplateObject {
  object: 'template';
  id: string;
  name: string;
  alias: string;
  from: string | null;
  subject: string | null;
  reply_to: string[] | null;
  html?: string | null;
  text?: string | null;
  source?: string | Record<string, unknown> | null;
  editor: Editor;
  published_at: string | null;
  preview_url: string | null;
  created_at: string;
  updated_at: string;
  mjml?: MjmlDocumentInfo;
  versions?: Array<{ id: string; name: string; published_at: string | null; created_at: string; updated_at: string }>;
  total_versions?: number;
}

function storedSource(row: TemplateRow): string | Record<string, unknown> | null {
  if (row.source === null) return null;
  return row.source_is_json ? (JSON.parse(row.source) as Record<string, unknown>) : row.source;
}

export function templateObject(row: TemplateRow, content = true): TemplateObject {
  return {
    object: 'template',
    id: row.id,
    name: row.name,
    alias: row.alias,
    from: row.from_address,
    subject: row.subject,
    reply_to: row.reply_to === null ? null : (JSON.parse(row.reply_to) as string[]),
    ...(content ? { html: row.html, text: row.text_body, source: storedSource(row) } : {}),
    editor: row.editor as Editor,
    published_at: row.published_at,
    preview_url: null,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.mjml ? { mjml: JSON.parse(row.mjml) as MjmlDocumentInfo } : {}),
  };
}

/** The `template.*` event object (https://emailit.com/docs/webhooks/event-types.md). */
function eventObject(row: TemplateRow) {
  return {
    id: row.id,
    object: 'template',
    name: row.name,
    alias: row.alias,
    from: row.from_address,
    subject: row.subject,
    reply_to: row.reply_to === null ? [] : (JSON.parse(row.reply_to) as string[]),
    html: row.html,
    text: row.text_body,
    editor: row.editor,
    published_at: row.published_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

// ---------------------------------------------------------------------------------------
// Field rules (the `{message:'Validation failed', errors}` family)

const ADDRESS = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/;

/** A bare address or `Display Name <address>`. */
function isValidMailbox(value: string): boolean {
  const trimmed = value.trim();
  const named = /^(.*)<([^<>]+)>$/.exec(trimmed);
  return ADDRESS.test(named ? named[2].trim() : trimmed);
}

function replyToList(value: string | string[] | null | undefined): string[] | null {
  if (value === null || value === undefined) return null;
  const list = (Array.isArray(value) ? value : [value]).map((v) => v.trim()).filter((v) => v !== '');
  return list.length ? list : null;
}

/** '' (or null) clears an optional text field. */
const orNull = (value: string | null | undefined) =>
  value === undefined ? undefined : value === null || value.trim() === '' ? null : value;

function templeProblems(field: string, value: string | null | undefined, errors: Record<string, string[]>) {
  if (!value) return;
  const found = findTempleErrors(value).slice(0, 5);
  if (found.length) errors[field] = found.map((e) => `Invalid variable syntax at line ${e.line}, column ${e.column}: ${e.reason}`);
}

function fieldErrors(input: TemplateInput): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if (input.name !== undefined && input.name.trim() === '') errors.name = ['The name field is required.'];
  if (input.alias !== undefined) {
    if (input.alias === '') errors.alias = ['The alias field is required.'];
    else if (!ALIAS_PATTERN.test(input.alias))
      errors.alias = ['The alias may only contain lowercase letters, numbers, dashes and underscores.'];
  }
  if (input.from && input.from.trim() !== '' && !isValidMailbox(input.from)) {
    errors.from = ['The from must be a valid email address, optionally with a display name ("Name <address>").'];
  }
  if (Array.isArray(input.reply_to) || (typeof input.reply_to === 'string' && input.reply_to.trim() !== '')) {
    const bad = (replyToList(input.reply_to) ?? []).filter((a) => !isValidMailbox(a));
    if (bad.length)
      errors.reply_to = bad.slice(0, 10).map((a) => `The reply_to address ${JSON.stringify(a)} is not a valid email address.`);
    else if (Array.isArray(input.reply_to) && input.reply_to.length > 50)
      errors.reply_to = ['The reply_to may not have more than 50 addresses.'];
  }
  templeProblems('subject', input.subject, errors);
  const editor = input.editor;
  if (editor !== 'mjml') templeProblems('html', input.html, errors);
  templeProblems('text', input.text, errors);
  return errors;
}

// ---------------------------------------------------------------------------------------
// Reads

async function findVersion(db: Executor, workspaceId: string, id: string): Promise<TemplateRow | undefined> {
  if (!looksLikeId(id, 'tem')) return undefined;
  return db.selectFrom('templates').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

async function aliasInUse(db: Executor, workspaceId: string, alias: string): Promise<boolean> {
  const row = await db
    .selectFrom('templates')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('alias', '=', alias)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function getTemplate(db: Db, workspaceId: string, id: string) {
  const row = await findVersion(db, workspaceId, id);
  if (!row) throw notFound();
  const others = await db
    .selectFrom('templates')
    .select(['id', 'name', 'published_at', 'created_at', 'updated_at'])
    .where('workspace_id', '=', workspaceId)
    .where('alias', '=', row.alias)
    .where('id', '<>', row.id)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return { data: { ...templateObject(row), versions: others } };
}

/**
 * For sending: a `tem_` id names that exact version (published or not); anything else is an
 * alias and names its published version. Null when there is none.
 */
export async function resolveTemplateForSend(db: Executor, workspaceId: string, idOrAlias: string): Promise<TemplateObject | null> {
  const row = looksLikeId(idOrAlias, 'tem')
    ? await findVersion(db, workspaceId, idOrAlias)
    : await db
        .selectFrom('templates')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('alias', '=', idOrAlias)
        .where('published_at', 'is not', null)
        .executeTakeFirst();
  return row ? templateObject(row) : null;
}

export async function listTemplates(db: Db, workspaceId: string, query: Query & { include_content?: unknown }, requestUrl: string) {
  const includeContent = query.include_content === true || query.include_content === 'true';
  // Name and alias sort the same on both engines: lowercased, compared byte-wise.
  const textKey = (column: string): Expression<string> =>
    dialectOf(db) === 'postgres' ? sql<string>`lower(${sql.ref(column)}) collate "C"` : sql<string>`lower(${sql.ref(column)})`;
  const spec: ListSpec = {
    fields: {
      name: { type: 'string', expression: textKey('templates.name') },
      alias: { type: 'string', expression: textKey('templates.alias') },
      editor: { type: 'enum', column: 'templates.editor', values: EDITORS },
      created_at: { type: 'date', column: 'templates.created_at' },
      updated_at: { type: 'date', column: 'templates.updated_at' },
      published_at: { type: 'date', column: 'templates.published_at' },
    },
    sortConvention: 'sort-order',
    defaultSortColumn: 'templates.created_at',
    idColumn: 'templates.id',
  };

  const bracket = (key: string) => {
    const value = query[`filter[${key}]`];
    const text = Array.isArray(value) ? value[0] : value;
    return typeof text === 'string' && text !== '' ? text : undefined;
  };
  const nameFilter = bracket('name');
  const aliasFilter = bracket('alias');
  const editorFilter = bracket('editor');
  const useOr = query.match === 'or';

  let base = db.selectFrom('templates').where('templates.workspace_id', '=', workspaceId).where('templates.published_at', 'is not', null);
  if (nameFilter !== undefined || aliasFilter !== undefined || editorFilter !== undefined) {
    base = base.where((eb) => {
      const parts: Expression<SqlBool>[] = [];
      if (nameFilter !== undefined) {
        const pattern = `%${nameFilter.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        parts.push(
          eb.or([
            sql<SqlBool>`lower(templates.name) like ${pattern} escape '\\'`,
            sql<SqlBool>`lower(templates.alias) like ${pattern} escape '\\'`,
          ]),
        );
      }
      if (aliasFilter !== undefined) parts.push(eb('templates.alias', '=', aliasFilter));
      if (editorFilter !== undefined) parts.push(eb('templates.editor', '=', editorFilter));
      return useOr ? eb.or(parts) : eb.and(parts);
    });
  }
  base = applyListQuery(base, query, spec);

  const rows = base
    .selectAll('templates')
    .select((eb) =>
      eb
        .selectFrom('templates as v')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('v.workspace_id', '=', 'templates.workspace_id')
        .whereRef('v.alias', '=', 'templates.alias')
        .as('total_versions'),
    );
  return perPageList(
    rows,
    base.select('templates.id'),
    query,
    (row) => ({
      ...templateObject(row as TemplateRow, includeContent),
      total_versions: Number((row as { total_versions: number | null }).total_versions ?? 1),
    }),
    requestUrl,
  );
}

// ---------------------------------------------------------------------------------------
// Writes

/** Runs `work` in a transaction, again (twice at most) if it lost a race on a unique index. */
async function withRetry<T>(db: Db, work: (tx: Executor) => Promise<T>, onSecondConflict: () => ApiError): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      if (attempt >= 2) throw onSecondConflict();
    }
  }
}

/** How a source is stored: text as is, an object as JSON (returned as an object again). */
function sourceText(source: string | Record<string, unknown> | null | undefined): { source: string | null; isJson: number } {
  if (source === null || source === undefined) return { source: null, isJson: 0 };
  if (typeof source === 'string') return { source, isJson: 0 };
  try {
    return { source: JSON.stringify(source), isJson: 1 };
  } catch {
    throw fieldValidationError({ source: ['The source is nested too deeply.'] }); // JSON.stringify overflows the stack
  }
}

export async function createTemplate(db: Db, workspaceId: string, input: TemplateInput & { name: string; alias: string }) {
  const editor: Editor = input.editor ?? 'html';
  if (editor === 'mjml' && !(await hasMjmlAccess(db, workspaceId))) throw mjmlAlphaError();
  const errors = fieldErrors({ ...input, editor });
  if (Object.keys(errors).length) throw fieldValidationError(errors);

  const now = nowIso();
  const { source, isJson } = sourceText(input.source);
  let html = input.html ?? null;
  let mjml: MjmlDocumentInfo | null = null;
  if (editor === 'mjml') {
    const compiled = await compileTemplateSource(input.source, now);
    html = compiled.html;
    mjml = compiled.mjml;
  }
  const row: TemplateRow = {
    id: newId('tem'),
    workspace_id: workspaceId,
    name: input.name.trim(),
    alias: input.alias,
    from_address: orNull(input.from) ?? null,
    subject: orNull(input.subject) ?? null,
    reply_to: jsonList(replyToList(input.reply_to)),
    html,
    text_body: input.text ?? null,
    source,
    source_is_json: isJson,
    editor,
    mjml: mjml ? JSON.stringify(mjml) : null,
    published_at: null,
    created_at: now,
    updated_at: now,
  };
  const created = await withRetry(
    db,
    async (tx) => {
      // The first version of an alias is published; a concurrent first version loses the
      // unique index race and is retried here as a draft.
      const version = { ...row, published_at: (await aliasInUse(tx, workspaceId, row.alias)) ? null : now };
      await tx.insertInto('templates').values(version).execute();
      await emitEvent(tx, workspaceId, 'template.created', eventObject(version));
      return version;
    },
    () => new ApiError(409, { error: 'The template was changed concurrently; try again' }),
  );
  return { data: templateObject(created), message: 'Template created successfully' };
}

const jsonList = (list: string[] | null) => (list === null ? null : JSON.stringify(list));

export async function updateTemplate(db: Db, workspaceId: string, id: string, input: TemplateInput) {
  const current = await findVersion(db, workspaceId, id);
  if (!current) throw notFound();
  const editor: Editor = input.editor ?? (current.editor as Editor);
  const mjmlInvolved = current.editor === 'mjml' || editor === 'mjml';
  const touchesContent =
    input.html !== undefined ||
    input.text !== undefined ||
    input.source !== undefined ||
    (input.editor !== undefined && input.editor !== current.editor);
  // Rename, alias and publish work for everyone; an MJML template's content needs the alpha.
  if (mjmlInvolved && touchesContent && !(await hasMjmlAccess(db, workspaceId))) throw mjmlAlphaError();

  const errors = fieldErrors({ ...input, editor });
  if (input.alias !== undefined && input.alias !== current.alias && !errors.alias && (await aliasInUse(db, workspaceId, input.alias))) {
    errors.alias = ['The alias has already been taken.'];
  }
  if (Object.keys(errors).length) throw fieldValidationError(errors);

  const now = nowIso();
  const next: TemplateRow = { ...current };
  if (input.name !== undefined) next.name = input.name.trim();
  if (input.alias !== undefined) next.alias = input.alias;
  if (input.from !== undefined) next.from_address = orNull(input.from) ?? null;
  if (input.subject !== undefined) next.subject = orNull(input.subject) ?? null;
  if (input.reply_to !== undefined) next.reply_to = jsonList(replyToList(input.reply_to));
  if (input.text !== undefined) next.text_body = input.text;
  if (input.source !== undefined) {
    const { source, isJson } = sourceText(input.source);
    next.source = source;
    next.source_is_json = isJson;
  }
  next.editor = editor;
  if (editor === 'mjml') {
    // The HTML of an MJML template is always compiled from its source; a sent html is ignored.
    if (input.source !== undefined || current.editor !== 'mjml') {
      const compiled = await compileTemplateSource(input.source !== undefined ? input.source : storedSource(current), now);
      next.html = compiled.html;
      next.mjml = JSON.stringify(compiled.mjml);
    }
  } else {
    next.mjml = null;
    if (input.html !== undefined) next.html = input.html;
  }

  const changed = (Object.keys(next) as Array<keyof TemplateRow>).some((key) => key !== 'mjml' && next[key] !== current[key]);
  if (!changed) return { data: templateObject(current), message: 'Template updated successfully' };
  next.updated_at = now;

  const updated = await withRetry(
    db,
    async (tx) => {
      // Re-checked inside the transaction: the alias may have been taken meanwhile.
      if (next.alias !== current.alias && (await aliasInUse(tx, workspaceId, next.alias))) {
        throw fieldValidationError({ alias: ['The alias has already been taken.'] });
      }
      const result = await tx
        .updateTable('templates')
        .set({ ...next })
        .where('id', '=', current.id)
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) throw notFound();
      await emitEvent(tx, workspaceId, 'template.updated', eventObject(next));
      return next;
    },
    () => fieldValidationError({ alias: ['The alias has already been taken.'] }),
  );
  return { data: templateObject(updated), message: 'Template updated successfully' };
}

export async function publishTemplate(db: Db, workspaceId: string, id: string) {
  const published = await withRetry(
    db,
    async (tx) => {
      const found = await findVersion(tx, workspaceId, id);
      if (!found) throw notFound();
      // Concurrent publishes of one alias queue here (PostgreSQL row locks; SQLite runs one
      // writer at a time), and each then reads what the previous one committed.
      if (dialectOf(tx) === 'postgres') {
        await tx
          .selectFrom('templates')
          .select('id')
          .where('workspace_id', '=', workspaceId)
          .where('alias', '=', found.alias)
          .orderBy('id')
          .forUpdate()
          .execute();
      }
      const row = await findVersion(tx, workspaceId, id);
      if (!row) throw notFound();
      if (row.published_at !== null) return { row, changed: false };
      const now = nowIso();
      // Unpublish the alias's current version first: the unique index allows one at a time.
      const previous = await tx
        .selectFrom('templates')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('alias', '=', row.alias)
        .where('published_at', 'is not', null)
        .execute();
      for (const old of previous) {
        await tx.updateTable('templates').set({ published_at: null }).where('id', '=', old.id).execute();
        await emitEvent(tx, workspaceId, 'template.updated', eventObject({ ...old, published_at: null }));
      }
      const next = { ...row, published_at: now, updated_at: now };
      await tx.updateTable('templates').set({ published_at: now, updated_at: now }).where('id', '=', row.id).execute();
      await emitEvent(tx, workspaceId, 'template.updated', eventObject(next));
      return { row: next, changed: true };
    },
    () => new ApiError(409, { error: 'The template was published concurrently; try again' }),
  );
  return {
    data: templateObject(published.row),
    message: published.changed ? 'Template published successfully' : 'Template is already published',
  };
}

export async function deleteTemplate(db: Db, workspaceId: string, id: string) {
  const deleted = await db.transaction().execute(async (tx) => {
    const row = await findVersion(tx, workspaceId, id);
    if (!row) throw notFound();
    await tx.deleteFrom('templates').where('id', '=', row.id).execute();
    await emitEvent(tx, workspaceId, 'template.deleted', eventObject(row));
    return row;
  });
  return {
    data: { object: 'template', id: deleted.id, name: deleted.name, alias: deleted.alias, deleted: true },
    message: 'Template deleted successfully',
  };
}
