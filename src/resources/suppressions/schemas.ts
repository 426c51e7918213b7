// Response bodies of the suppressions API (https://emailit.com/docs/suppressions.md).
import { Type } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';
import { SUPPRESSION_TYPES } from './input.ts';

const text = (description: string) => Type.String({ description });

export const Suppression = Type.Object(
  {
    object: Type.Literal('suppression', { description: 'Always suppression' }),
    id: text('sup_ id'),
    type: Type.Union(
      SUPPRESSION_TYPES.map((t) => Type.Literal(t)),
      { description: 'Why the address is suppressed; recipient blocks transactional sends too' },
    ),
    email: text('The suppressed address, lowercase'),
    reason: nullable(text('Why, for a person')),
    created_at: text('When it was added'),
    keep_until: nullable(text('When it expires; null for permanent')),
  },
  { title: 'Suppression' },
);

export const SuppressionList = pageLimitListOf(Suppression, 'SuppressionList');

export const DeletedSuppression = Type.Object(
  { id: text('sup_ id'), email: text('The address'), deleted: Type.Literal(true, { description: 'Always true' }) },
  { title: 'DeletedSuppression' },
);
