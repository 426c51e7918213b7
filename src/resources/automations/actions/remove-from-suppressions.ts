// remove_from_suppressions: removes `email`, else the run's email recipient or contact, from the
// suppressions (not_suppressed when it was not there).
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../../platform/http/errors.ts';
import { deleteSuppression } from '../../suppressions/service.ts';
import { nonEmpty, StepFailure, type ActionDefinition } from './action.ts';

export const removeFromSuppressions: ActionDefinition = {
  title: 'Remove from suppressions',
  description: "Removes an address from the suppressions: `email`, else the run's email recipient or contact.",
  config: Type.Object({
    email: Type.Optional(Type.String({ description: 'The address; required in the event context; placeholders allowed' })),
  }),
  branching: 'default',

  check(c, { context, add }) {
    if (context === 'event' && !nonEmpty(c.email)) add('email', 'The email is required in the event context.');
  },

  async run({ ctx, workspaceId, config, scope, contact, finish }) {
    const address = config.email || scope.email?.to || contact?.email;
    if (!address) throw new StepFailure('There is no address to remove (email).');
    let removed = true;
    try {
      await deleteSuppression(ctx.db, workspaceId, String(address));
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
      removed = false;
    }
    return finish({
      status: 'completed',
      outcome: removed ? 'removed' : 'not_suppressed',
      data: { result: removed ? 'removed' : 'not_suppressed', email: String(address).toLowerCase() },
    });
  },
};
