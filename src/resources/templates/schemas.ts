// Response bodies of the templates API (docs/api.md, "Templates and MJML").
import { Type } from '@sinclair/typebox';
import { nullable, perPageListOf } from '../../platform/http/responses.ts';
import { EDITORS } from './service.ts';

const text = (description: string) => Type.String({ description });
const Editor = Type.Union(
  EDITORS.map((e) => Type.Literal(e)),
  { description: 'Editor the template was made with' },
);

const MjmlInfo = Type.Object(
  {
    document_schema_version: Type.Integer({ description: 'Version of the stored MJML document format' }),
    mjml_version: text('MJML compiler version that compiled it'),
    format: nullable(Type.String({ description: 'Source format: markup or json' })),
    compiled_at: text('When the HTML was compiled'),
    warnings: Type.Integer({ description: 'Compiler warnings' }),
  },
  { title: 'TemplateMjml', description: 'For editor mjml: how the HTML was compiled from the source' },
);

const Version = Type.Object(
  {
    id: text('tem_ id of the version'),
    name: text('Name of the version'),
    published_at: nullable(text('When it was published; null for a draft')),
    created_at: text('When it was created'),
    updated_at: text('When it was last changed'),
  },
  { title: 'TemplateVersion' },
);

const templateFields = {
  object: Type.Literal('template', { description: 'Always template' }),
  id: text('tem_ id of this version'),
  name: text('Name'),
  alias: text('Alias shared by all versions; sending by alias uses the published version'),
  from: nullable(text('Default sender')),
  subject: nullable(text('Default subject')),
  reply_to: nullable(Type.Array(Type.String(), { description: 'Default reply-to addresses' })),
  html: Type.Optional(nullable(text('HTML body'))),
  text: Type.Optional(nullable(text('Plain-text body'))),
  source: Type.Optional(
    Type.Union([Type.String(), Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description: 'Editor source document, as stored',
    }),
  ),
  editor: Editor,
  published_at: nullable(text('When this version was published; null for a draft')),
  preview_url: nullable(text('Preview page, when there is one')),
  created_at: text('When it was created'),
  updated_at: text('When it was last changed'),
  mjml: Type.Optional(MjmlInfo),
};

export const Template = Type.Object(templateFields, { title: 'Template' });

/** GET /templates/{id}: the version with its siblings. */
export const TemplateWithVersions = Type.Object(
  {
    data: Type.Object(
      { ...templateFields, versions: Type.Array(Version, { description: 'The other versions of the alias, newest first' }) },
      { title: 'TemplateWithVersions' },
    ),
  },
  { title: 'TemplateResponse' },
);

/** Create, update and publish: the version and a message. */
export const TemplateChanged = Type.Object({ data: Template, message: text('What happened') }, { title: 'TemplateChangedResponse' });

export const TemplateDeleted = Type.Object(
  {
    data: Type.Object(
      {
        object: Type.Literal('template', { description: 'Always template' }),
        id: text('tem_ id of the deleted version'),
        name: text('Name'),
        alias: text('Alias'),
        deleted: Type.Literal(true, { description: 'Always true' }),
      },
      { title: 'DeletedTemplate' },
    ),
    message: text('What happened'),
  },
  { title: 'TemplateDeletedResponse' },
);

export const TemplateList = perPageListOf(
  Type.Object({ ...templateFields, total_versions: Type.Integer({ description: 'Versions of the alias' }) }, { title: 'TemplateListItem' }),
  'TemplateList',
);
