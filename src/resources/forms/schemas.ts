// Request and response bodies of the forms API and of its public endpoints
// (https://emailit.com/docs/forms.md; the paths the spec does not show follow its conventions).
import { Type } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';
import { FORM_TYPES } from './definition.ts';

const text = (description: string) => Type.String({ description });
const anyObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const FormType = Type.Union(
  FORM_TYPES.map((t) => Type.Literal(t)),
  { description: 'popup, full_page, flyout, embed or banner' },
);
const Name = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: 'Not shown to visitors' });
const Definition = anyObject('version, type, steps, styles, targeting, experiments: stored as given, checked when published');
const Settings = anyObject('Free-form settings, stored as given');

// Requests ---------------------------------------------------------------------------------

export const IdParams = Type.Object({ id: text('frm_ id') });
export const LoadParams = Type.Object({ id: text("A frm_ id (with a full key) or a form's public token (no key)") });
export const TokenParams = Type.Object({ token: text("The form's public token") });

export const CreateBody = Type.Object({
  name: Name,
  type: Type.Optional(FormType),
  definition: Type.Optional(Definition),
  settings: Type.Optional(Settings),
});

export const UpdateBody = Type.Object({
  // An empty name is the spec's 400 `{error:'Invalid name'}`, not a schema error.
  name: Type.Optional(Type.String({ maxLength: 255, description: 'Not empty' })),
  type: Type.Optional(FormType),
  definition: Type.Optional(Definition),
  settings: Type.Optional(Settings),
});

export const SubmitBody = Type.Object({
  fields: Type.Record(Type.String(), Type.Unknown(), {
    description: 'Input name → value: text, true for a checkbox, an array of option values for a checkbox group',
  }),
  page_url: Type.Optional(Type.String({ maxLength: 2048, description: 'The page the form was submitted on (default: the Referer)' })),
  experiment_id: Type.Optional(Type.String({ maxLength: 100, description: 'The experiment the visitor was in' })),
  variant_id: Type.Optional(Type.String({ maxLength: 100, description: 'The variant of that experiment the visitor was shown' })),
  honeypot: Type.Optional(Type.String({ maxLength: 1000, description: 'The hidden field; left empty by people' })),
  proof: Type.Optional(
    Type.Object(
      {
        challenge: Type.Object(
          {
            parameters: anyObject('The challenge parameters as given'),
            signature: Type.Optional(text('The challenge signature as given')),
          },
          { description: 'The challenge of the public load, unchanged' },
        ),
        solution: Type.Object(
          {
            counter: Type.Integer({ minimum: 0, description: 'The counter found' }),
            derivedKey: Type.String({ maxLength: 1024, description: 'The key derived for it, hex' }),
          },
          { description: 'What the solver found' },
        ),
      },
      { description: 'The solved proof-of-work challenge (ALTCHA v2): required' },
    ),
  ),
});

// Responses --------------------------------------------------------------------------------

const listFields = {
  object: Type.Literal('form', { description: 'Always form' }),
  id: text('frm_ id'),
  name: text('Not shown to visitors'),
  type: FormType,
  status: Type.Union([Type.Literal('draft'), Type.Literal('live')], { description: 'draft, or live once published' }),
  token: text('Public token used by the embed script and the public endpoints'),
  created_at: text('When it was created'),
  updated_at: text('When it last changed'),
  published_at: nullable(text('The last publish; null before the first')),
};

export const FormListItem = Type.Object(listFields, { title: 'FormListItem' });
export const Form = Type.Object({ ...listFields, definition: Definition, settings: Settings }, { title: 'Form' });
export const FormList = pageLimitListOf(FormListItem, 'FormList', {
  total_records: Type.Integer({ description: 'Forms matching the filters, on every page' }),
});
export const DeletedForm = Type.Object(
  { object: listFields.object, id: listFields.id, deleted: Type.Literal(true, { description: 'Always true' }) },
  { title: 'DeletedForm' },
);

export const FormSubmission = Type.Object(
  {
    object: Type.Literal('form_submission', { description: 'Always form_submission' }),
    id: text('fsub_ id'),
    form_id: text('frm_ id of its form'),
    fields: anyObject('The submitted values by input name (emails in lowercase)'),
    page_url: nullable(text('The page it was submitted on')),
    experiment_id: nullable(text('The experiment the visitor was in, if any')),
    variant_id: nullable(text('The variant the visitor was shown, if any')),
    created_at: text('When it was submitted'),
  },
  { title: 'FormSubmission' },
);
export const FormSubmissionList = pageLimitListOf(FormSubmission, 'FormSubmissionList', {
  total_records: Type.Integer({ description: 'Submissions matching the filters, on every page' }),
});

export const FormEmbed = Type.Object(
  {
    object: Type.Literal('form_embed', { description: 'Always form_embed' }),
    public_key: text("The workspace's public key, in the script's URL"),
    script_url: text('The embed script of the workspace'),
    html: text('The tag to place once on every page, before </body>'),
    placeholder_html: text('An element that marks where an embed form goes (its token in data-postlane-form)'),
  },
  { title: 'FormEmbed' },
);

export const PublicForm = Type.Object(
  {
    object: Type.Literal('public_form', { description: 'Always public_form' }),
    token: text('The public token'),
    type: FormType,
    definition: Definition,
    challenge: Type.Object(
      {
        parameters: anyObject('ALTCHA v2 challenge parameters (algorithm, nonce, salt, cost, keyPrefix, expiresAt, …)'),
        signature: Type.Optional(text('Its signature')),
      },
      { description: 'A proof-of-work challenge to solve before submitting (valid for an hour, accepted once)' },
    ),
    submit_url: text('Where to POST the submission'),
  },
  { title: 'PublicForm' },
);

export const SubmitResult = Type.Object(
  {
    object: Type.Literal('form_submission', { description: 'Always form_submission' }),
    id: text('fsub_ id'),
    created_at: text('When it was submitted'),
    success_step: anyObject('The success step to show (id, name, kind, blocks)'),
  },
  { title: 'FormSubmitResult' },
);
