// Response bodies of the emails API (https://emailit.com/docs/email-api.md). Field
// order is the order they are sent in.
import { Type, type TProperties } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';
import { EMAIL_STATUSES } from './read.ts';
import { BOUNCE_REASON_NAMES } from '../../mail/bounce-reasons.ts';

const text = (description: string) => Type.String({ description });
const Status = Type.Union(
  EMAIL_STATUSES.map((s) => Type.Literal(s)),
  { description: 'Delivery status (https://emailit.com/docs/logs/email-statuses.md)' },
);
const BounceReason = Type.Union(
  BOUNCE_REASON_NAMES.map((r) => Type.Literal(r)),
  { description: 'Documented bounce reason (README "Bounce reasons")' },
);
const BounceType = Type.Union([Type.Literal('hard'), Type.Literal('soft')], { description: 'hard: will not go away by itself; soft: may' });
const Bounce = nullable(
  Type.Object(
    { reason: BounceReason, type: BounceType, description: nullable(text('What the reason means')) },
    { title: 'EmailBounce', description: 'Why the last delivery attempt, bounce report or complaint went wrong; null when nothing did' },
  ),
);
const Meta = nullable(Type.Record(Type.String(), Type.String(), { description: 'The meta object given at send' }));
const Tracking = Type.Object(
  { loads: Type.Boolean({ description: 'Opens are tracked' }), clicks: Type.Boolean({ description: 'Clicks are tracked' }) },
  { title: 'EmailTracking', description: 'Tracking in effect for this email' },
);
const Addresses = (description: string) => Type.Array(Type.String(), { description });
const HeaderMap = nullable(
  Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), {
    description: 'Headers by name; a repeated header is an array',
  }),
);
const AttachmentInfo = {
  filename: text('File name'),
  content_type: text('MIME type'),
  content_id: nullable(text('Content-ID of an inline attachment')),
  size: Type.Integer({ description: 'Bytes' }),
};

const common = {
  object: Type.Literal('email', { description: 'Always email' }),
  id: text("em_ id of this recipient's email"),
};
const identity = {
  token: text('Token of the email (also the local part of its Message-ID)'),
  message_id: text('Message-ID header, <token@domain>'),
};
const dates = {
  scheduled_at: nullable(text('When it is (or was) scheduled to go out')),
  created_at: text('When it was accepted'),
};

/** Fields every read of one email shares (emailMetadata in retrieved.ts), in order. */
const metadata = {
  ...common,
  type: Type.Union([Type.Literal('outbound'), Type.Literal('inbound')], { description: 'outbound or inbound' }),
  ...identity,
  from: text('Sender as sent, display name included'),
  to: text("This email's recipient"),
  subject: text('Subject'),
  status: Status,
  ...dates,
  updated_at: text('When its status last changed'),
  delivered_at: nullable(text('When the receiving server accepted it')),
  size: Type.Integer({ description: 'Message size in bytes' }),
  tracking: Tracking,
  meta: Meta,
  original_id: nullable(text('For a forward or retry: the email it came from')),
} satisfies TProperties;

/** POST /emails: the first recipient's email, `ids` with several recipients. */
const sendFields = {
  ...common,
  ids: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "With several recipients: each address's em_ id" })),
  ...identity,
  from: text('Sender as sent'),
  to: Addresses('Recipients'),
  cc: Type.Optional(Addresses('Cc recipients')),
  bcc: Type.Optional(Addresses('Bcc recipients')),
  subject: text('Subject'),
  status: Status,
  ...dates,
  tracking: Tracking,
} satisfies TProperties;
export const SentEmail = Type.Object(sendFields, { title: 'SentEmail' });

export const ForwardedEmail = Type.Object(
  { ...sendFields, original_id: text('The forwarded email'), message: text('Confirmation') },
  { title: 'ForwardedEmail' },
);

/** Send and forward share one Idempotency-Key namespace, so either may replay the other's
 *  response (https://emailit.com/docs/api-reference/idempotency/); the stricter shape comes
 *  first for the serializer. */
export const AcceptedEmail = Type.Union([ForwardedEmail, SentEmail], { title: 'AcceptedEmail' });

export const RetriedEmail = Type.Object(
  {
    ...common,
    original_id: text('The retried email'),
    ...identity,
    from: text('Sender as sent'),
    to: text('The recipient'),
    subject: text('Subject'),
    status: Status,
    created_at: text('When it was accepted'),
    message: text('Confirmation'),
  },
  { title: 'RetriedEmail' },
);

export const EmailList = pageLimitListOf(
  Type.Object(
    {
      ...common,
      type: metadata.type,
      from: metadata.from,
      to: metadata.to,
      subject: metadata.subject,
      status: Status,
      size: metadata.size,
      ...dates,
      updated_at: metadata.updated_at,
      meta: Meta,
      bounce_reason: nullable(BounceReason),
      bounce_type: nullable(BounceType),
    },
    { title: 'EmailListItem' },
  ),
  'EmailList',
);

const purgedAt = nullable(text('When the content was purged after the retention period; content fields are null then'));
const ccReplyTo = {
  cc: nullable(Addresses('Cc recipients; null once purged')),
  reply_to: nullable(Addresses('Reply-To addresses; null once purged')),
};

export const RetrievedEmail = Type.Object(
  {
    ...common,
    type: metadata.type,
    ...identity,
    from: metadata.from,
    to: metadata.to,
    ...ccReplyTo,
    subject: metadata.subject,
    status: Status,
    ...dates,
    updated_at: metadata.updated_at,
    delivered_at: metadata.delivered_at,
    bounce: Bounce,
    tracking: Tracking,
    meta: Meta,
    headers: HeaderMap,
    html: nullable(text('HTML body')),
    text: nullable(text('Plain-text body')),
    attachments: nullable(
      Type.Array(Type.Object(AttachmentInfo, { title: 'AttachmentInfo' }), { description: 'Attachments without content' }),
    ),
    size: metadata.size,
    original_id: metadata.original_id,
    purged_at: purgedAt,
    attempts: Type.Array(
      Type.Object(
        {
          attempted_at: text('When'),
          outcome: text('What happened: delivered, deferred, bounced, failed…'),
          mx_host: nullable(text('Receiving server')),
          smtp_code: nullable(Type.Integer({ description: 'SMTP reply code' })),
          enhanced_code: nullable(text('Enhanced status code, e.g. 5.1.1')),
          response: nullable(text("The server's reply")),
          reason: nullable(BounceReason),
          tls: nullable(
            text(
              "TLS of the session: dane (required, certificate matched the MX host's DNSSEC-authenticated TLSA records), mta-sts (required, certificate verified), tls (implicit, or required without verification: DANE with only unusable TLSA records), opportunistic (STARTTLS when offered), none",
            ),
          ),
          source_address: nullable(text('Local address the connection came from (IP pools); null: chosen by the OS')),
        },
        { title: 'DeliveryAttempt' },
      ),
      { description: 'Delivery attempts, oldest first' },
    ),
  },
  { title: 'RetrievedEmail' },
);

export const EmailMeta = Type.Object(
  {
    ...metadata,
    ...ccReplyTo,
    headers: HeaderMap,
    attachments: RetrievedEmail.properties.attachments,
    purged_at: purgedAt,
  },
  { title: 'EmailMeta' },
);

export const EmailRaw = Type.Object(
  { ...metadata, raw: nullable(text('The raw MIME message')), purged_at: purgedAt },
  { title: 'EmailRaw' },
);

export const EmailBody = Type.Object(
  { text: nullable(text('Plain-text body')), html: nullable(text('HTML body')) },
  { title: 'EmailBody' },
);

export const EmailAttachments = Type.Object(
  {
    data: nullable(
      Type.Array(Type.Object({ ...AttachmentInfo, content: text('Base64 content') }, { title: 'Attachment' }), {
        description: 'Null once purged',
      }),
    ),
  },
  { title: 'EmailAttachments' },
);

export const EmailStatus = Type.Object({ status: Status }, { title: 'EmailStatus' });

/** Reschedule and cancel: the email as it is now, and a confirmation. */
export const ChangedEmail = Type.Object({ ...metadata, message: text('Confirmation') }, { title: 'ChangedEmail' });
