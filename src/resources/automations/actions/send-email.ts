// send_email: a template to the run's contact (contact context) or to `to`. The email and the
// visit's end are written in one transaction (the email pipeline's own), so a visit sends one
// email however often its job runs.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../platform/context.ts';
import { feedbackId } from '../../../mail/feedback-id.ts';
import { unsubscribeUrl } from '../../campaigns/service.ts';
import type { ContactRow } from '../../contacts/service.ts';
import { acceptMessage, buildSendRequest } from '../../emails/service.ts';
import { automationPrincipal, hasPlaceholder, nonEmpty, StepFailure, type ActionDefinition } from './action.ts';

/** What bulk mail carries (docs/deliverability.md): Feedback-ID, and for a contact's mail the
 *  RFC 8058 one-click List-Unsubscribe, whose POST unsubscribes the contact from all campaigns. */
function bulkMailHeaders(
  ctx: AppContext,
  automationId: string,
  workspaceId: string,
  fromAddress: string,
  contact: ContactRow | null,
): Record<string, string> {
  const headers: Record<string, string> = {
    'Feedback-ID': feedbackId(automationId, workspaceId, 'automation', fromAddress.slice(fromAddress.lastIndexOf('@') + 1)),
  };
  if (!contact) return headers;
  const url = unsubscribeUrl(ctx, automationId, contact.id);
  headers['List-Unsubscribe'] = `<${url}>`;
  if (url.startsWith('https://')) headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  return headers;
}

export const sendEmail: ActionDefinition = {
  title: 'Send email',
  description: "Sends a template to the run's contact (contact context) or to `to`. 1 credit per email.",
  config: Type.Object({
    type: Type.Literal('template', { description: 'Always template' }),
    template_id: Type.String({ minLength: 1, description: 'tem_ id or the alias of a published template' }),
    from: Type.Optional(Type.String({ description: "Defaults to the template's from; on a verified sending domain of the workspace" })),
    subject: Type.Optional(Type.String({ description: "Defaults to the template's subject" })),
    reply_to: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'An address or an array of addresses' })),
    to: Type.Optional(
      Type.String({ description: "The recipient: required outside the contact context (where the run's contact is the recipient)" }),
    ),
  }),
  branching: 'default',

  async checkDraft(c, { lookups, add }) {
    if (nonEmpty(c.from) && !hasPlaceholder(c.from)) {
      const problem = await lookups.fromProblem(c.from);
      if (problem) add('from', problem);
    }
  },

  async check(c, { context, lookups, add }) {
    if (c.type !== 'template') add('type', 'The type is required and must be template.');
    if (!nonEmpty(c.template_id)) add('template_id', 'The template_id is required.');
    else if (!hasPlaceholder(c.template_id)) {
      const templateFrom = await lookups.templateFrom(c.template_id);
      if (templateFrom === undefined)
        add('template_id', 'No template version with this id and no published template with this alias exists.');
      else if (!nonEmpty(c.from)) {
        // Without its own `from`, the step sends from the template's, which must be on a verified domain too.
        const problem = templateFrom ? await lookups.fromProblem(templateFrom) : 'The template has no from address; give the step a from.';
        if (problem) add('from', problem);
      }
    }
    if (context !== 'contact' && !nonEmpty(c.to)) add('to', 'The to is required outside the contact context.');
    for (const field of ['subject', 'to'] as const)
      if (c[field] !== undefined && typeof c[field] !== 'string') add(field, `The ${field} must be a string.`);
    if (
      c.reply_to !== undefined &&
      typeof c.reply_to !== 'string' &&
      !(Array.isArray(c.reply_to) && c.reply_to.every((v: unknown) => typeof v === 'string'))
    )
      add('reply_to', 'The reply_to must be an address or an array of addresses.');
  },

  async run({ ctx, workspaceId, automation, visit, config, scope, contact, finishIn }) {
    const to = automation.context === 'contact' ? contact?.email : config.to;
    if (!to)
      throw new StepFailure(
        automation.context === 'contact' ? "The run's contact no longer exists." : 'The send_email step has no recipient (to).',
      );
    const variables: Record<string, unknown> = {
      ...(scope.contact ?? {}),
      cf: scope.contact?.custom_fields ?? {},
      contact: scope.contact ?? {},
      payload: scope.payload,
      meta: scope.meta,
      ...(automation.context === 'contact' ? {} : { email: scope.email ?? {} }),
    };
    const request = await buildSendRequest(ctx, workspaceId, {
      template: config.template_id,
      from: config.from || undefined,
      subject: config.subject || undefined,
      reply_to: config.reply_to || undefined,
      to,
      variables,
    });
    Object.assign(
      request.message.headers,
      bulkMailHeaders(ctx, automation.id, workspaceId, request.message.from.address, automation.context === 'contact' ? contact : null),
    );
    await acceptMessage(ctx, automationPrincipal(workspaceId), {
      ...request,
      inTransaction: async (tx, rows) => {
        const email = rows[0];
        const suppressed = email.status === 'suppressed';
        await finishIn(tx, {
          status: 'completed',
          outcome: suppressed ? 'failed' : 'accepted',
          data: {
            result: suppressed ? 'suppressed' : 'sent',
            outcome: suppressed ? 'suppressed' : 'accepted',
            email_oid: email.id,
            to: email.to,
          },
          emailId: email.id,
        });
      },
    });
  },
};
