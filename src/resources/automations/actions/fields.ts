// Config fields several actions and triggers share, as JSON Schema for the catalogue.
import { Type } from '@sinclair/typebox';
import { FILTER_OPERATORS, MAX_FILTER_RULES } from '../../webhooks/service.ts';

export const FilterSchema = Type.Object(
  {
    match: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Literal('any')], { description: 'all (default): every rule must match; any: one is enough' }),
    ),
    rules: Type.Array(
      Type.Object({
        field: Type.String({ minLength: 1, description: 'A dotted path' }),
        operator: Type.Union(
          FILTER_OPERATORS.map((o) => Type.Literal(o)),
          { description: 'is_set and is_not_set take no value; in and not_in take an array' },
        ),
        value: Type.Optional(
          Type.Unknown({ description: 'What the field is compared with; text may hold placeholders ({{contact.email}})' }),
        ),
      }),
      { maxItems: MAX_FILTER_RULES, description: 'The rules' },
    ),
  },
  { description: 'A filter: match and rules (the webhook filter language)' },
);

export const audienceId = (description: string) => Type.String({ minLength: 1, description: `aud_ id: ${description}` });
