// add_to_suppressions: suppresses `email`, else the run's email recipient or contact (already
// suppressed counts as done).
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../../platform/http/errors.ts';
import { createSuppression } from '../../suppressions/service.ts';
import { nonEmpty, StepFailure, type ActionDefinition } from './action.ts';

export const SUPPRESSION_TYPES = ['recipient', 'bounce', 'complaint', 'unsubscribe'];

export const addToSuppressions: ActionDefinition = {
  title: 'Add to suppressions',
  description: "Suppresses an address: `email`, else the run's email recipient or contact.",
  config: Type.Object({
    email: Type.Optional(Type.String({ description: 'The address; required in the event context; placeholders allowed' })),
    type: Type.Optional(
      Type.Union(
        SUPPRESSION_TYPES.map((t) => Type.Literal(t)),
        { default: 'recipient', description: 'The suppression type' },
      ),
    ),
    reason: Type.Optional(Type.String({ default: 'automation', description: 'Why' })),
  }),
  branching: 'default',

  check(c, { context, add }) {
    if (c.type !== undefined && !SUPPRESSION_TYPES.includes(c.type)) add('type', 'The type is not a suppression type.');
    if (context === 'event' && !nonEmpty(c.email)) add('email', 'The email is required in the event context.');
  },

  async run({ ctx, workspaceId, config, scope, contact, finish }) {
    const address = config.email || scope.email?.to || contact?.email;
    if (!address) throw new StepFailure('There is no address to suppress (email).');
    try {
      await createSuppression(ctx.db, workspaceId, {
        email: String(address),
        type: config.type ?? 'recipient',
        reason: config.reason ?? 'automation',
      });
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 409)) throw error;
    }
    return finish({ status: 'completed', outcome: 'suppressed', data: { result: 'suppressed', email: String(address).toLowerCase() } });
  },
};
