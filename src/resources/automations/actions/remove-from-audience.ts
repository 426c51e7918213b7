// remove_from_audience: removes the run's contact from an audience (in the visit's transaction).
import { Type } from '@sinclair/typebox';
import { findAudience, removeContactFromAudience } from '../../audiences/service.ts';
import { StepFailure, type ActionDefinition } from './action.ts';
import { checkAudienceId } from './add-to-audience.ts';
import { audienceId } from './fields.ts';

export const removeFromAudience: ActionDefinition = {
  title: 'Remove from audience',
  description: "Removes the run's contact from an audience (not_member when it was not in it).",
  config: Type.Object({ audience_id: audienceId('the audience to remove the contact from; placeholders allowed') }),
  branching: 'default',
  check: checkAudienceId,

  async run({ ctx, workspaceId, config, contact, finish }) {
    if (!contact) throw new StepFailure("The run's contact no longer exists.");
    const audience = await findAudience(ctx.db, workspaceId, String(config.audience_id));
    if (!audience) throw new StepFailure('The audience does not exist.');
    return finish(async (tx) => {
      const removed = await removeContactFromAudience(tx, workspaceId, audience, contact);
      return {
        status: 'completed',
        outcome: removed ? 'removed' : 'not_member',
        data: { result: removed ? 'removed' : 'not_member', audience_id: audience.id },
      };
    });
  },
};
