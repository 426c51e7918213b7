// Response bodies of the MJML endpoints (https://emailit.com/docs/templates/mjml.md).
import { Type } from '@sinclair/typebox';
import { nullable } from '../../platform/http/responses.ts';

const text = (description: string) => Type.String({ description });

const Diagnostic = Type.Object(
  {
    severity: Type.Union([Type.Literal('error'), Type.Literal('warning'), Type.Literal('info')], { description: 'How serious' }),
    code: text('Stable code of the problem'),
    message: text('The problem, for a person'),
    line: Type.Optional(Type.Integer({ description: 'Line in the source' })),
    column: Type.Optional(Type.Integer({ description: 'Column in the source' })),
    tag: Type.Optional(text('MJML tag concerned')),
    attribute: Type.Optional(text('Attribute concerned')),
    path: Type.Optional(Type.Array(Type.Integer(), { description: 'Path of child indexes to the element in the document' })),
  },
  { title: 'MjmlDiagnostic' },
);
const diagnostics = Type.Array(Diagnostic, { description: 'Problems found, errors first' });
const common = {
  valid: Type.Boolean({ description: 'No error was found' }),
  mjml_version: text('MJML compiler version'),
};

export const MjmlValidation = Type.Object(
  {
    ...common,
    format: nullable(
      Type.Union([Type.Literal('markup'), Type.Literal('json')], { description: 'How the source was read; null when unreadable' }),
    ),
    diagnostics,
  },
  { title: 'MjmlValidation' },
);

export const MjmlRender = Type.Object(
  {
    ...common,
    html: nullable(text('The compiled HTML; null when invalid')),
    html_bytes: Type.Integer({ description: 'Size of the HTML in bytes' }),
    diagnostics,
    rendered_html: Type.Optional(nullable(text('With variables given: the HTML with them filled in'))),
  },
  { title: 'MjmlRender' },
);

/** 422 of a missing or invalid source: `{message, errors}` plus the diagnostics when compiled. */
export const MjmlSourceError = Type.Object(
  {
    message: text('Validation failed'),
    errors: Type.Record(Type.String(), Type.Array(Type.String()), { description: 'Messages by field' }),
    diagnostics: Type.Optional(diagnostics),
  },
  { title: 'MjmlSourceError' },
);

export const MjmlReference = Type.Object(
  {
    mjml_version: text('MJML compiler version'),
    document_schema_version: Type.Integer({ description: 'Version of the stored MJML document format' }),
    editors: Type.Object({}, { additionalProperties: true, description: 'Editors and their stage' }),
    components: Type.Unknown({ description: 'Every MJML component with its attributes and allowed children' }),
    temple_guide: Type.Unknown({ description: 'How variables and conditionals are written in MJML templates' }),
    rules: Type.Unknown({ description: 'The rules the validator applies' }),
    reference_text: text('The whole reference as text, for people and assistants'),
  },
  { title: 'MjmlReference' },
);
