// create_contact: finds or creates the contact of `email` (in the email context, the run's
// recipient by default), and subscribes it to `audience_id` when given, in the visit's
// transaction.
import { Type } from '@sinclair/typebox';
import { findAudience, subscribeContact } from '../../audiences/service.ts';
import { findOrCreateContact } from '../../contacts/service.ts';
import { nonEmpty, StepFailure, type ActionDefinition } from './action.ts';
import { audienceId } from './fields.ts';

export const createContact: ActionDefinition = {
  title: 'Create contact',
  description: 'Finds or creates a contact (in the email context the recipient by default) and, with audience_id, subscribes it.',
  config: Type.Object({
    email: Type.Optional(Type.String({ description: 'The address; required in the event context; placeholders allowed' })),
    first_name: Type.Optional(Type.String({ description: 'For a new contact' })),
    audience_id: Type.Optional(audienceId('an audience to subscribe the contact to')),
  }),
  branching: 'default',

  async check(c, { context, lookups, add }) {
    if (context === 'event' && !nonEmpty(c.email)) add('email', 'The email is required in the event context.');
    if (c.audience_id !== undefined && (!nonEmpty(c.audience_id) || !(await lookups.audienceExists(c.audience_id))))
      add('audience_id', 'The audience_id must be an audience of the workspace.');
  },

  async run({ ctx, workspaceId, automation, config, scope, finish }) {
    const address = config.email || (automation.context === 'email' ? scope.email?.to : undefined);
    if (!address) throw new StepFailure('There is no address for the contact (email).');
    const audience = config.audience_id ? await findAudience(ctx.db, workspaceId, String(config.audience_id)) : undefined;
    return finish(async (tx) => {
      const { contact: made, created } = await findOrCreateContact(tx, workspaceId, {
        email: String(address),
        ...(config.first_name ? { first_name: String(config.first_name) } : {}),
      });
      if (audience) await subscribeContact(tx, workspaceId, audience, made);
      return {
        status: 'completed',
        outcome: created ? 'created' : 'found',
        data: { result: created ? 'created' : 'found', contact_id: made.id },
      };
    });
  },
};
