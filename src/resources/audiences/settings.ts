// The optional audience settings (https://emailit.com/docs/audiences.md) — public page, double
// opt-in, confirmation email, unengaged — as request schemas and as the objects stored, merged over
// the current ones on update. Turning on an email needs a `from` on a verified domain of the
// workspace.
import { Type, type Static } from '@sinclair/typebox';
import type { AppContext } from '../../platform/context.ts';
import type { Executor } from '../../platform/db/database.ts';
import { plainError } from '../../platform/http/errors.ts';
import { nullable } from '../../platform/http/responses.ts';
import { findSendingDomain } from '../domains/service.ts';
import { domainOf, parseAddressField } from '../emails/service.ts';
import {
  confirmationEmailOf,
  doubleOptInOf,
  unengagedOf,
  type AudienceEmailSettings,
  type AudienceRow,
  type AudienceSettings,
} from './records.ts';

const optionalText = (max: number, description: string) =>
  Type.Optional(Type.Union([Type.String({ maxLength: max }), Type.Null()], { description }));
const emailFields = {
  from: optionalText(320, 'sender, on a verified domain of the workspace'),
  reply_to: optionalText(320, 'reply address'),
  subject: optionalText(191, 'subject'),
  design: Type.Optional(Type.Union([Type.Literal('default'), Type.Literal('custom')])),
  heading: optionalText(500, 'heading'),
  body: optionalText(10_000, 'text above the button'),
  button_label: optionalText(100, 'label of the button'),
  footer: optionalText(1000, 'footer text'),
};

export const SettingsInput = {
  visibility: Type.Optional(
    Type.Union([Type.Literal('public'), Type.Literal('private')], { description: 'public: a hosted subscribe page exists' }),
  ),
  public_name: optionalText(120, 'name shown to visitors (null: the name)'),
  public_description: optionalText(500, 'description shown to visitors'),
  double_opt_in: Type.Optional(
    Type.Union(
      [
        Type.Boolean(),
        Type.Object({
          enabled: Type.Optional(Type.Boolean()),
          redirect_url: optionalText(2048, 'where a confirmed visitor is sent'),
          email: Type.Optional(Type.Object(emailFields)),
        }),
      ],
      { description: 'confirm new subscribers by email' },
    ),
  ),
  confirmation_email: Type.Optional(
    Type.Union(
      [
        Type.Boolean(),
        Type.Object({
          enabled: Type.Optional(Type.Boolean()),
          email: Type.Optional(Type.Object({ ...emailFields, button_url: optionalText(2048, 'link of the button') })),
        }),
      ],
      { description: 'a welcome email once subscribed' },
    ),
  ),
  unengaged: Type.Optional(
    Type.Object(
      { exclude: Type.Optional(Type.Boolean()), days: Type.Optional(Type.Integer({ minimum: 30, maximum: 1825 })) },
      { description: 'leave out subscribers inactive this many days' },
    ),
  ),
};
const SettingsObject = Type.Object(SettingsInput);
export type SettingsBody = Static<typeof SettingsObject>;

const emailSettingsSchema = (extra: Record<string, ReturnType<typeof Type.String> | ReturnType<typeof nullable>> = {}) =>
  Type.Object(
    {
      from: nullable(Type.String({ description: 'Sender' })),
      reply_to: nullable(Type.String({ description: 'Reply address' })),
      subject: nullable(Type.String({ description: 'Subject' })),
      design: Type.Union([Type.Literal('default'), Type.Literal('custom')], { description: 'default or custom' }),
      heading: nullable(Type.String({ description: 'Heading' })),
      body: nullable(Type.String({ description: 'Text above the button' })),
      button_label: nullable(Type.String({ description: 'Button label' })),
      footer: nullable(Type.String({ description: 'Footer' })),
      ...extra,
    },
    { description: 'The email sent' },
  );

export const SettingsOutput = {
  visibility: Type.Union([Type.Literal('public'), Type.Literal('private')], { description: 'public: a hosted subscribe page exists' }),
  public_name: nullable(Type.String({ description: 'Name shown to visitors (null: the name)' })),
  public_description: nullable(Type.String({ description: 'Description shown to visitors' })),
  double_opt_in: Type.Object(
    {
      enabled: Type.Boolean({ description: 'On or off' }),
      redirect_url: nullable(Type.String({ description: 'Where a confirmed visitor goes' })),
      email: emailSettingsSchema(),
    },
    { description: 'Double opt-in' },
  ),
  confirmation_email: Type.Object(
    {
      enabled: Type.Boolean({ description: 'On or off' }),
      email: emailSettingsSchema({ button_url: nullable(Type.String({ description: 'Button link' })) }),
    },
    { description: 'Welcome email once subscribed' },
  ),
  unengaged: Type.Object(
    {
      exclude: Type.Boolean({ description: 'Leave out unengaged subscribers' }),
      days: Type.Integer({ description: 'Days without engagement' }),
    },
    { description: 'Unengaged subscribers' },
  ),
};

function withEmail<T extends { enabled: boolean; email: AudienceEmailSettings }>(
  current: T,
  input: boolean | ({ enabled?: boolean; email?: Partial<T['email']> } & Record<string, unknown>),
): T {
  if (typeof input === 'boolean') return { ...current, enabled: input };
  const { email, enabled, ...rest } = input;
  return { ...current, ...rest, enabled: enabled ?? current.enabled, email: { ...current.email, ...email } };
}

async function checkSender(ctx: AppContext, db: Executor, workspaceId: string, field: string, email: AudienceEmailSettings): Promise<void> {
  if (!email.from) throw plainError(400, `${field}.email.from is required to turn ${field} on`);
  const { addresses, invalid } = parseAddressField(email.from);
  if (addresses.length !== 1 || invalid.length > 0) throw plainError(400, `${field}.email.from is not an email address`);
  const domain = await findSendingDomain(db, ctx.secrets, workspaceId, domainOf(addresses[0].address));
  if (!domain?.verified) throw plainError(422, 'Domain not verified');
  if (email.reply_to) {
    const reply = parseAddressField(email.reply_to);
    if (reply.addresses.length !== 1 || reply.invalid.length > 0) throw plainError(400, `${field}.email.reply_to is not an email address`);
  }
}

function checkUrl(value: string | null | undefined, field: string): void {
  if (!value) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw plainError(400, `${field} must be an http or https URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw plainError(400, `${field} must be an http or https URL`);
}

/** The settings to store, from the request merged over `current` (a new audience: none). */
export async function resolveSettings(
  ctx: AppContext,
  db: Executor,
  workspaceId: string,
  input: SettingsBody,
  current?: AudienceRow,
): Promise<AudienceSettings> {
  const out: AudienceSettings = {};
  const base = current ?? ({ double_opt_in: null, confirmation_email: null, unengaged: null } as AudienceRow);
  if (input.visibility !== undefined) out.visibility = input.visibility;
  if (input.public_name !== undefined) out.public_name = input.public_name?.trim() || null;
  if (input.public_description !== undefined) out.public_description = input.public_description?.trim() || null;
  if (input.double_opt_in !== undefined) {
    const next = withEmail(doubleOptInOf(base), input.double_opt_in);
    checkUrl(next.redirect_url, 'double_opt_in.redirect_url');
    if (next.enabled) await checkSender(ctx, db, workspaceId, 'double_opt_in', next.email);
    out.double_opt_in = next;
  }
  if (input.confirmation_email !== undefined) {
    const next = withEmail(confirmationEmailOf(base), input.confirmation_email);
    checkUrl(next.email.button_url, 'confirmation_email.email.button_url');
    if (next.enabled) await checkSender(ctx, db, workspaceId, 'confirmation_email', next.email);
    out.confirmation_email = next;
  }
  if (input.unengaged !== undefined) out.unengaged = { ...unengagedOf(base), ...input.unengaged };
  return out;
}
