// add_to_audience: subscribes the run's contact to an audience (the audiences' rule, in the
// visit's transaction).
import { Type } from '@sinclair/typebox';
import { findAudience, subscribeContact } from '../../audiences/service.ts';
import { hasPlaceholder, nonEmpty, StepFailure, type ActionDefinition, type ConfigCheck } from './action.ts';
import { audienceId } from './fields.ts';

/** The audience_id check add_to_audience and remove_from_audience share. */
export async function checkAudienceId(c: Record<string, any>, { lookups, add }: ConfigCheck): Promise<void> {
  if (!nonEmpty(c.audience_id) || (!hasPlaceholder(c.audience_id) && !(await lookups.audienceExists(c.audience_id))))
    add('audience_id', 'The audience_id must be an audience of the workspace.');
}

export const addToAudience: ActionDefinition = {
  title: 'Add to audience',
  description: "Subscribes the run's contact to an audience (resubscribes one who left).",
  config: Type.Object({ audience_id: audienceId('the audience to subscribe the contact to; placeholders allowed') }),
  branching: 'default',
  check: checkAudienceId,

  async run({ ctx, workspaceId, config, contact, finish }) {
    if (!contact) throw new StepFailure("The run's contact no longer exists.");
    const audience = await findAudience(ctx.db, workspaceId, String(config.audience_id));
    if (!audience) throw new StepFailure('The audience does not exist.');
    return finish(async (tx) => {
      const { outcome } = await subscribeContact(tx, workspaceId, audience, contact);
      return { status: 'completed', outcome, data: { result: outcome, audience_id: audience.id } };
    });
  },
};
