// Request and response bodies of single verification
// (https://emailit.com/docs/api-reference/email-verifications.md). The verification object is also
// an item of a list's results (email-verification-lists).
import { Type } from '@sinclair/typebox';
import { nullable } from '../../platform/http/responses.ts';
import { VERIFICATION_RESULTS } from '../../mail/verification-score.ts';

const text = (description: string) => Type.String({ description });
const flag = (description: string) => nullable(Type.Boolean({ description }));
const literals = <T extends string>(values: readonly T[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );

export const VERIFICATION_MODES = ['fast', 'full'] as const;

export const VerifyBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 1000, description: 'The address to check' }),
  mode: Type.Optional(literals(VERIFICATION_MODES, '`fast` (default): no mailbox check; `full`: also asks the mailbox server')),
});

const Checks = Type.Object(
  {
    valid_syntax: Type.Boolean({ description: 'The address is correctly formed' }),
    disposable: Type.Boolean({ description: 'The domain is a throwaway-mail service' }),
    role_account: Type.Boolean({ description: 'The mailbox is a role or team (info@, support@), not a person' }),
    free_email: Type.Boolean({ description: 'The domain is a free mailbox provider' }),
    gibberish: Type.Boolean({ description: 'The mailbox looks randomly typed or generated' }),
    has_mx_records: flag('The domain publishes MX records; null when DNS did not answer'),
    domain_age: nullable(Type.Integer({ description: 'Days since the domain was registered (RDAP); null when unknown' })),
    smtp_connect: flag('A mail server of the domain greeted us (full mode; null in fast mode)'),
    deliverable: flag('The server accepted the address (full mode); null without an answer about the mailbox'),
    inbox_full: flag('The server said the mailbox is full (full mode)'),
    disabled: flag('The server said the mailbox is disabled (full mode)'),
    catch_all: flag('The server accepts any address of the domain (full mode); null when not known'),
  },
  { description: 'The individual checks behind the result' },
);

const Address = Type.Object(
  {
    mailbox: nullable(text('The local part without a +suffix')),
    domain: nullable(text('The domain')),
    suffix: nullable(text('What follows + in the local part, or null')),
    root: nullable(text('The address without its suffix')),
  },
  { description: 'The address in parts' },
);

const MailboxCheck = Type.Object(
  {
    outcome: literals(
      [
        'accepted',
        'rejected',
        'disabled',
        'inbox_full',
        'greylisted',
        'temporary',
        'blocked',
        'timeout',
        'connection_failed',
        'not_checked',
        'no_mx',
        'dns_failed',
      ],
      'What the mailbox check found: the server accepted, rejected (no such mailbox), said disabled or full, greylisted (try later), gave another temporary answer, blocked the check itself, timed out, could not be reached; not_checked when the MX hosts resolve only to addresses that are not public (loopback, private, link-local…), which are never connected to; or there was no MX to ask (no_mx) or DNS failed (dns_failed)',
    ),
    mx_host: nullable(text('The MX host that gave the answer')),
    code: nullable(Type.Integer({ description: 'Its SMTP reply code' })),
    enhanced_code: nullable(text('Its enhanced status code (e.g. 5.1.1)')),
    message: text('The reply (or what went wrong), as received'),
  },
  { description: 'Postlane: what the mail server answered, so that timeouts and greylisting are visible as such' },
);

export const EmailVerification = Type.Object(
  {
    object: Type.Literal('email_verification', { description: 'Always email_verification' }),
    id: text('ev_ id'),
    email: text('The address checked (trimmed, lowercase)'),
    status: literals(
      ['completed', 'pending', 'failed'],
      '`completed`; `pending` while a list address waits; `failed` when DNS could not be asked',
    ),
    score: nullable(Type.Integer({ minimum: 0, maximum: 100, description: '0–100; null while pending' })),
    risk: nullable(literals(['low', 'medium', 'high'], 'Risk of sending to it; null while pending')),
    result: nullable(
      literals(
        VERIFICATION_RESULTS,
        'The first that applies: invalid, disposable, disabled, inbox_full, role, safe (score ≥ 70), unknown; null while pending',
      ),
    ),
    mode: literals(VERIFICATION_MODES, 'fast or full'),
    checks: nullable(Checks),
    address: nullable(Address),
    did_you_mean: nullable(text('The address with a misspelt big provider corrected, or null')),
    mx_records: Type.Array(Type.Object({ priority: Type.Integer({ description: 'MX preference' }), exchange: text('Mail host') }), {
      description: "The domain's MX records, by preference",
    }),
    mailbox_check: nullable(MailboxCheck),
    created_at: text('When it was requested'),
    updated_at: text('When the result was recorded'),
  },
  { title: 'EmailVerification' },
);
