// Forms: https://emailit.com/docs/forms.md. A form is
// created as a `draft` with its definition stored as given, checked when it is published;
// `live` forms are what the public endpoints and the embed script serve, and a live form's
// update is checked the same way (it stays publishable) and is visible at once. Unpublish
// takes it back to `draft`; rotating the token stops the old one at once; delete removes the
// form with its submissions.
import type { Selectable } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.ts';
import { looksLikeId, newId, randomAlphanumeric } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { plainError } from '../../platform/http/errors.ts';
import { applyListQuery, countRows, pageLimitList, type ListSpec, type Query } from '../../platform/http/lists.ts';
import { definitionProblems, FORM_TYPES, MISSING_STEPS, starterDefinition, type FormType } from './definition.ts';
import type { FormsTable } from './tables.ts';

type FormRow = Selectable<FormsTable>;
type Json = Record<string, unknown>;

export interface FormListItem {
  object: 'form';
  id: string;
  name: string;
  type: string;
  status: string;
  token: string;
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

export interface Form extends FormListItem {
  definition: Json;
  settings: Json;
}

export function formListItem(row: FormRow): FormListItem {
  return {
    object: 'form',
    id: row.id,
    name: row.name,
    type: row.type,
    status: row.status,
    token: row.token,
    created_at: row.created_at,
    updated_at: row.updated_at,
    published_at: row.published_at,
  };
}

export function formObject(row: FormRow): Form {
  return { ...formListItem(row), definition: JSON.parse(row.definition), settings: JSON.parse(row.settings) };
}

export interface CreateFormInput {
  name: string;
  type?: FormType;
  definition?: Json;
  settings?: Json;
}

export interface UpdateFormInput {
  name?: string;
  type?: FormType;
  definition?: Json;
  settings?: Json;
}

const NOT_FOUND = 'Form not found';
/** A public token: letters and digits only, so it is never mistaken for a `frm_` id. */
export const newFormToken = () => randomAlphanumeric(32);

const isFormType = (value: unknown): value is FormType => (FORM_TYPES as readonly unknown[]).includes(value);

/** The definition with `type` matching the form's (`type` updates `definition.type`). */
function withType(definition: Json, type: FormType): string {
  return JSON.stringify({ ...definition, type });
}

/** 422 unless the definition can be published (and served by the embed script). */
export function requirePublishable(definition: Json): void {
  const problems = definitionProblems(definition);
  if (problems.length === 0) return;
  if (problems[0] === MISSING_STEPS) throw plainError(422, MISSING_STEPS);
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
  throw plainError(422, `The form cannot be published: ${problems.slice(0, 5).join('; ')}${more}`);
}

export async function createForm(db: Db, workspaceId: string, input: CreateFormInput): Promise<Form> {
  const given = input.definition?.type;
  const type = input.type ?? (isFormType(given) ? given : 'popup');
  const definition = input.definition ?? (starterDefinition(type) as unknown as Json);
  const now = nowIso();
  const row: FormRow = {
    id: newId('frm'),
    workspace_id: workspaceId,
    name: input.name.trim(),
    type,
    status: 'draft',
    token: newFormToken(),
    definition: withType(definition, type),
    settings: JSON.stringify(input.settings ?? {}),
    created_at: now,
    updated_at: now,
    published_at: null,
  };
  await db.insertInto('forms').values(row).execute();
  return formObject(row);
}

async function findForm(db: Executor, workspaceId: string, id: string): Promise<FormRow> {
  const row = looksLikeId(id, 'frm')
    ? await db.selectFrom('forms').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
    : undefined;
  if (!row) throw plainError(404, NOT_FOUND);
  return row;
}

export async function getForm(db: Db, workspaceId: string, id: string): Promise<Form> {
  return formObject(await findForm(db, workspaceId, id));
}

export async function updateForm(db: Db, workspaceId: string, id: string, input: UpdateFormInput): Promise<Form> {
  if (input.name !== undefined && input.name.trim() === '') throw plainError(400, 'Invalid name');
  return db.transaction().execute(async (tx) => {
    const row = await findForm(tx, workspaceId, id);
    if (input.name === undefined && input.type === undefined && input.definition === undefined && input.settings === undefined)
      return formObject(row);
    const type = input.type ?? (row.type as FormType);
    const definition = withType(input.definition ?? JSON.parse(row.definition), type);
    // A live form stays servable: an update that could not be published is refused.
    if (row.status === 'live') requirePublishable(JSON.parse(definition));
    const next: FormRow = {
      ...row,
      name: input.name?.trim() ?? row.name,
      type,
      definition,
      settings: input.settings !== undefined ? JSON.stringify(input.settings) : row.settings,
      updated_at: nowIso(),
    };
    await tx
      .updateTable('forms')
      .set({ name: next.name, type: next.type, definition: next.definition, settings: next.settings, updated_at: next.updated_at })
      .where('id', '=', row.id)
      .execute();
    return formObject(next);
  });
}

const listSpec: ListSpec = {
  fields: {
    name: { type: 'string' },
    type: { type: 'enum', values: FORM_TYPES },
    status: { type: 'enum', values: ['draft', 'live'] },
    created_at: { type: 'date' },
  },
  searchColumns: ['name'],
  sortConvention: 'order-direction',
};

export async function listForms(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const filtered = applyListQuery(db.selectFrom('forms').selectAll().where('workspace_id', '=', workspaceId), query, listSpec);
  const [page, total] = await Promise.all([pageLimitList(filtered, query, requestUrl, 10, formListItem), countRows(filtered)]);
  return { ...page, total_records: total };
}

/** Applies `change` to the form in one transaction with its lookup. */
async function transition(db: Db, workspaceId: string, id: string, change: (row: FormRow, now: string) => Partial<FormRow>): Promise<Form> {
  return db.transaction().execute(async (tx) => {
    const row = await findForm(tx, workspaceId, id);
    const changes = change(row, nowIso());
    if (Object.keys(changes).length > 0) await tx.updateTable('forms').set(changes).where('id', '=', row.id).execute();
    return formObject({ ...row, ...changes });
  });
}

export function publishForm(db: Db, workspaceId: string, id: string): Promise<Form> {
  return transition(db, workspaceId, id, (row, now) => {
    requirePublishable(JSON.parse(row.definition));
    return { status: 'live', published_at: now, updated_at: now };
  });
}

/** Back to `draft`: the public endpoints and the embed script stop serving it at once. */
export function unpublishForm(db: Db, workspaceId: string, id: string): Promise<Form> {
  return transition(db, workspaceId, id, (row, now) => (row.status === 'draft' ? {} : { status: 'draft', updated_at: now }));
}

/** A new public token; the old one stops answering at once. */
export function rotateFormToken(db: Db, workspaceId: string, id: string): Promise<Form> {
  return transition(db, workspaceId, id, (_row, now) => ({ token: newFormToken(), updated_at: now }));
}

export async function deleteForm(db: Db, workspaceId: string, id: string) {
  return db.transaction().execute(async (tx) => {
    const row = await findForm(tx, workspaceId, id);
    await tx.deleteFrom('form_submissions').where('form_id', '=', row.id).execute();
    await tx.deleteFrom('forms').where('id', '=', row.id).execute();
    return { object: 'form' as const, id: row.id, deleted: true as const };
  });
}

// Submissions ------------------------------------------------------------------------------

const submissionSpec: ListSpec = {
  fields: {
    created_at: { type: 'date' },
    page_url: { type: 'string' },
    experiment_id: { type: 'string' },
    variant_id: { type: 'string' },
  },
  // The stored fields are JSON text, so `search` finds any submitted value (an address).
  searchColumns: ['fields', 'page_url'],
  sortConvention: 'order-direction',
};

export function submissionObject(row: {
  id: string;
  form_id: string;
  fields: string;
  page_url: string | null;
  experiment_id: string | null;
  variant_id: string | null;
  created_at: string;
}) {
  return {
    object: 'form_submission' as const,
    id: row.id,
    form_id: row.form_id,
    fields: JSON.parse(row.fields) as Json,
    page_url: row.page_url,
    experiment_id: row.experiment_id,
    variant_id: row.variant_id,
    created_at: row.created_at,
  };
}

export async function listSubmissions(db: Db, workspaceId: string, formId: string, query: Query, requestUrl: string) {
  const form = await findForm(db, workspaceId, formId);
  const base = db
    .selectFrom('form_submissions')
    .select(['id', 'form_id', 'fields', 'page_url', 'experiment_id', 'variant_id', 'created_at'])
    .where('form_id', '=', form.id);
  const filtered = applyListQuery(base, query, submissionSpec);
  const [page, total] = await Promise.all([pageLimitList(filtered, query, requestUrl, 10, submissionObject), countRows(filtered)]);
  return { ...page, total_records: total };
}

// The embed script's key -------------------------------------------------------------------

/** The workspace's public key for its embed script, made on first use. */
export async function embedKeyOf(db: Db, workspaceId: string): Promise<string> {
  const find = () => db.selectFrom('form_embed_keys').select('public_key').where('workspace_id', '=', workspaceId).executeTakeFirst();
  const existing = await find();
  if (existing) return existing.public_key;
  await db
    .insertInto('form_embed_keys')
    .values({ workspace_id: workspaceId, public_key: randomAlphanumeric(24), created_at: nowIso() })
    .onConflict((oc) => oc.column('workspace_id').doNothing())
    .execute();
  return (await find())!.public_key;
}

/** What a workspace places on its pages: the script tag, and the element an embed form fills. */
export async function embedSnippet(db: Db, publicUrl: string, workspaceId: string) {
  const publicKey = await embedKeyOf(db, workspaceId);
  const scriptUrl = `${publicUrl}/js/${publicKey}/postlane.js`;
  return {
    object: 'form_embed' as const,
    public_key: publicKey,
    script_url: scriptUrl,
    html: `<script async src="${scriptUrl}"></script>`,
    placeholder_html: '<div data-postlane-form="FORM_TOKEN"></div>',
  };
}

/** The workspace a public key names and its live forms (token and type), or null. */
export async function liveFormsByEmbedKey(db: Db, publicKey: string): Promise<Array<{ token: string; type: string }> | null> {
  const key = await db.selectFrom('form_embed_keys').select('workspace_id').where('public_key', '=', publicKey).executeTakeFirst();
  if (!key) return null;
  return db
    .selectFrom('forms')
    .select(['token', 'type'])
    .where('workspace_id', '=', key.workspace_id)
    .where('status', '=', 'live')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
