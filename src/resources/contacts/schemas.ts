// Request and response bodies of the contacts API (docs/api.md, "Contacts, audiences
// and subscribers") and of imports.
import { Type } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';
import { pageLimitQuery } from '../../platform/http/lists.ts';

const text = (description: string) => Type.String({ description });
const Name = Type.Union([Type.String({ maxLength: 255 }), Type.Null()]);
const CustomFieldsInput = Type.Object(
  {},
  { additionalProperties: true, description: 'values by custom-field key; date fields YYYY-MM-DD; unknown keys stored as given' },
);

export const CreateContactBody = Type.Object({
  email: Type.String({ maxLength: 320, description: 'stored in lowercase' }),
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  custom_fields: Type.Optional(CustomFieldsInput),
  audiences: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), { maxItems: 1000, description: 'aud_ ids; ids not in the workspace are skipped' }),
  ),
  unsubscribed: Type.Optional(Type.Boolean({ description: 'true creates the contact unsubscribed, its memberships too' })),
});

export const UpdateContactBody = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 320 })),
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  custom_fields: Type.Optional(CustomFieldsInput),
  audiences: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), { maxItems: 1000, description: 'the complete list: missing ones added, others removed' }),
  ),
  unsubscribed: Type.Optional(Type.Boolean({ description: 'true unsubscribes from all campaigns, false resubscribes' })),
});

export const ContactIdParams = Type.Object({ id: Type.String({ description: 'con_ id or URL-encoded email address' }) });

const SORT_KEYS = ['email', 'first_name', 'last_name', 'name', 'audiences', 'created_at', 'updated_at'];
export const ContactListQuery = pageLimitQuery(10, {
  q: Type.Optional(Type.String({ description: 'alias of search' })),
  audience_id: Type.Optional(Type.String({ description: 'only members of this audience (aud_ id)' })),
  unsubscribed: Type.Optional(
    Type.Union(
      ['true', 'false', '1', '0'].map((v) => Type.Literal(v)),
      { description: 'only contacts (not) unsubscribed from all campaigns' },
    ),
  ),
  sort: Type.Optional(Type.String({ description: `sort key: ${SORT_KEYS.join(', ')} or custom_fields.<key>` })),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});

const audienceRef = { id: text('aud_ id'), name: text('Audience name') };

export const Contact = Type.Object(
  {
    object: Type.Literal('contact', { description: 'Always contact' }),
    id: text('con_ id'),
    email: text('Lowercase address, unique in the workspace'),
    first_name: nullable(text('First name')),
    last_name: nullable(text('Last name')),
    custom_fields: Type.Object({}, { additionalProperties: true, description: 'Values by custom-field key; {} when none' }),
    unsubscribed: Type.Boolean({ description: 'Unsubscribed from all campaigns' }),
    audiences: Type.Array(
      Type.Object({ ...audienceRef, subscribed: Type.Boolean({ description: 'Whether the membership is subscribed' }) }),
      { description: 'Memberships' },
    ),
    created_at: text('When created'),
    updated_at: text('When last changed'),
  },
  { title: 'Contact' },
);

export const MembershipSubscriber = Type.Object(
  {
    id: text('sub_ id'),
    subscribed: Type.Boolean({ description: 'Whether subscribed' }),
    subscribed_at: nullable(text('When last subscribed')),
    unsubscribed_at: nullable(text('When unsubscribed')),
    created_at: text('When the membership was created'),
    updated_at: text('When the membership last changed'),
  },
  { description: 'The membership' },
);

export const DetailedContact = Type.Object(
  {
    ...Contact.properties,
    audiences: Type.Array(Type.Object({ ...audienceRef, subscriber: MembershipSubscriber }), {
      description: 'Memberships with their subscriber object',
    }),
  },
  { title: 'DetailedContact' },
);

export const ContactList = pageLimitListOf(Contact, 'ContactList', {
  total_records: Type.Integer({ description: 'Contacts matching the filters, on every page' }),
});

export const DeletedContact = Type.Object(
  {
    object: Type.Literal('contact', { description: 'Always contact' }),
    id: text('con_ id'),
    email: text('The address'),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'DeletedContact' },
);

const ImportProblem = Type.Object({
  row: Type.Integer({ description: 'Row number in the file (CSV: 1 is the header, so data starts at 2; JSON: 1 is the first element)' }),
  email: nullable(text('The address on that row, if any')),
  reason: text('Why the row was skipped'),
});

export const ImportSummary = Type.Object(
  {
    object: Type.Literal('contact_import', { description: 'Always contact_import' }),
    status: Type.Union([Type.Literal('completed'), Type.Literal('failed')], {
      description: 'failed: stopped early; see error and committed_rows',
    }),
    format: Type.Union([Type.Literal('csv'), Type.Literal('json')], { description: 'What the file was read as' }),
    audience_id: nullable(text('Audience the contacts were added to')),
    rows: Type.Integer({ description: 'Data rows read' }),
    created: Type.Integer({ description: 'Contacts created' }),
    updated: Type.Integer({ description: 'Existing contacts whose fields changed' }),
    unchanged: Type.Integer({ description: 'Existing contacts left as they were' }),
    subscribed: Type.Integer({ description: 'New memberships of the audience' }),
    already_subscribed: Type.Integer({ description: 'Rows already members of the audience' }),
    kept_unsubscribed: Type.Integer({ description: 'Rows of contacts who unsubscribed: not resubscribed' }),
    suppressed: Type.Integer({ description: 'Rows whose address has an active suppression (kept; campaigns skip them)' }),
    skipped: Type.Integer({ description: 'Rows not imported (see errors)' }),
    errors: Type.Array(ImportProblem, { description: 'Skipped rows with the reason (the first 1,000)' }),
    errors_truncated: Type.Boolean({ description: 'More rows were skipped than listed' }),
    committed_rows: Type.Integer({ description: 'Rows whose outcome is committed: every row up to this one (all rows when completed)' }),
    error: Type.Optional(text('What stopped a failed import')),
  },
  { title: 'ContactImport' },
);
