// forward_email: forwards the run's email (or `email_id`) to `to`, through the emails' forward.
import { Type } from '@sinclair/typebox';
import { forwardEmail as forward } from '../../emails/service.ts';
import { automationPrincipal, nonEmpty, StepFailure, type ActionDefinition } from './action.ts';

export const forwardEmail: ActionDefinition = {
  title: 'Forward email',
  description: "Forwards the run's email (or `email_id`) to `to`, with its headers. 1 credit per email.",
  config: Type.Object({
    to: Type.String({ minLength: 1, description: 'The address to forward to' }),
    from: Type.Optional(Type.String({ description: 'Defaults to the original sender' })),
    subject: Type.Optional(Type.String({ description: 'Defaults to "Fwd: " and the original subject' })),
    email_id: Type.Optional(Type.String({ description: "em_ id; defaults to the run's email" })),
  }),
  branching: 'default',

  check(c, { add }) {
    if (!nonEmpty(c.to)) add('to', 'The to is required.');
  },

  async run({ ctx, workspaceId, run, visit, config, finish }) {
    const emailId = config.email_id || run.email_id;
    if (!emailId) throw new StepFailure('There is no email to forward (email_id).');
    // The visit's id as the Idempotency-Key: a repeated job replays, it does not send again.
    const outcome = await forward(ctx, automationPrincipal(workspaceId), emailId, `automation-${visit.id}`, {
      to: config.to,
      include_headers: true,
      ...(config.from ? { from: config.from } : {}),
      ...(config.subject ? { subject: config.subject } : {}),
    });
    const body = outcome.body as { id?: string; ids?: Record<string, string>; data?: Array<{ id: string }> };
    const sentId = body.id ?? body.data?.[0]?.id ?? null;
    return finish({
      status: 'completed',
      outcome: 'accepted',
      data: { result: 'sent', outcome: 'accepted', email_oid: sentId, to: config.to },
      emailId: sentId,
    });
  },
};
