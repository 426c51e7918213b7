// Request and response bodies of the campaigns API
// (https://emailit.com/docs/api-reference/campaigns.md; the paths the spec does not show follow its
// conventions).
import { Type } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';
import { pageLimitQuery } from '../../platform/http/lists.ts';

const text = (description: string) => Type.String({ description });

export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'queued', 'sending', 'paused', 'sent', 'canceled', 'archived'] as const;
export const CONTENT_TYPES = ['html', 'text', 'mjml'] as const;

const ContentType = Type.Union(
  CONTENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'html, text or mjml (MJML is stored, not compiled)' },
);
const Recipient = Type.Object(
  {
    audience_id: Type.Optional(text('aud_ id of an audience of the workspace (required)')),
    exclude: Type.Optional(Type.Boolean({ description: 'Stored and returned; the send does not apply exclusions (default false)' })),
  },
  { additionalProperties: true },
);

// Requests ---------------------------------------------------------------------------------

export const IdParams = Type.Object({ id: text('cmp_ id or URL-encoded name') });

export const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: 'Internal name; also accepted in paths' }),
    subject: Type.Optional(Type.String({ maxLength: 998, description: 'Merge tags allowed' })),
    from_email: Type.Optional(Type.String({ maxLength: 320, description: 'On a verified domain (checked when sending)' })),
    from_name: Type.Optional(Type.String({ maxLength: 255 })),
    reply_to: Type.Optional(Type.String({ maxLength: 320, description: 'Defaults to from_email at send' })),
    html: Type.Optional(Type.String({ description: 'HTML body with merge tags; set at creation only' })),
    text: Type.Optional(Type.String({ description: 'Plain-text body with merge tags; set at creation only' })),
    preview_text: Type.Optional(nullable(Type.String({ maxLength: 998, description: 'Stored only' }))),
    content: Type.Optional(Type.Unknown({ description: 'Editor source, stored as is' })),
    content_type: Type.Optional(ContentType),
  },
  { additionalProperties: true },
);

export const UpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    subject: Type.Optional(Type.String({ maxLength: 998 })),
    from_email: Type.Optional(Type.String({ maxLength: 320 })),
    from_name: Type.Optional(Type.String({ maxLength: 255 })),
    reply_to: Type.Optional(Type.String({ maxLength: 320 })),
    preview_text: Type.Optional(nullable(Type.String({ maxLength: 998 }))),
    content: Type.Optional(Type.Unknown({ description: 'Editor source, stored as is' })),
    content_type: Type.Optional(ContentType),
    recipients: Type.Optional(
      Type.Array(Recipient, { description: 'Replaces the list: at least one included audience of the workspace; duplicates ignored' }),
    ),
  },
  { additionalProperties: true, description: 'Unknown fields, html and text are ignored' },
);

export const SendBody = Type.Object(
  {
    scheduled_at: Type.Optional(
      nullable(
        Type.String({
          description: 'A future time (ISO 8601 or English such as "tomorrow at 9am", UTC) schedules a draft; absent or past sends now',
        }),
      ),
    ),
  },
  { additionalProperties: true },
);

const sortKeys = ['name', 'subject', 'status', 'created_at', 'sent_at'];
export const ListQuery = pageLimitQuery(10, {
  status: Type.Optional(Type.String({ description: `${CAMPAIGN_STATUSES.join(', ')} or all; sending also matches queued` })),
  order: Type.Optional(Type.String({ description: `Sort key: ${sortKeys.join(', ')}; newest first without it` })),
  direction: Type.Optional(Type.String({ description: 'asc or desc (order without direction sorts ascending)' })),
});

// Responses --------------------------------------------------------------------------------

const Status = Type.Union(
  CAMPAIGN_STATUSES.map((s) => Type.Literal(s)),
  { description: 'draft, scheduled, queued, sending, paused, sent, canceled or archived' },
);
const base = {
  object: Type.Literal('campaign', { description: 'Always campaign' }),
  id: text('cmp_ id'),
  name: text('Internal name'),
  status: Status,
  subject: text('Merge tags unresolved; empty until set'),
  from_email: text('Empty until set'),
  from_name: text('Empty until set'),
};
const dates = { created_at: text('When it was created'), updated_at: text('When it last changed') };
const scheduled = {
  scheduled_at: nullable(text('When a scheduled campaign sends (UTC)')),
  sent_at: nullable(text('When sending started')),
};
const details = {
  reply_to: text('Empty: replies go to from_email'),
  preview_text: nullable(text('Stored only')),
  content_type: ContentType,
};
const RecipientOut = Type.Object({
  audience_id: text('aud_ id'),
  exclude: Type.Boolean({ description: 'Stored; not applied by the send' }),
});
const statusReason = nullable(
  text(
    'Why the campaign waits or stopped: insufficient_credits (resumes by itself when credits are added), paused (on request), domain_not_verified, ' +
      'complaint_rate or hard_bounce_rate (paused by the deliverability guardrails), or null',
  ),
);
const pausedReason = nullable(
  text(
    'Postlane extension: a sentence saying why the deliverability guardrails paused the campaign (the rate, the limit and the counts); null otherwise',
  ),
);

export const CreatedCampaign = Type.Object({ ...base, ...details, ...dates }, { title: 'CreatedCampaign' });
export const Campaign = Type.Object(
  {
    ...base,
    ...details,
    ...scheduled,
    recipients: Type.Array(RecipientOut, { description: 'Audiences to send to' }),
    status_reason: statusReason,
    paused_reason: pausedReason,
    ...dates,
  },
  { title: 'Campaign' },
);
export const CampaignListItem = Type.Object({ ...base, ...scheduled, ...dates }, { title: 'CampaignListItem' });
export const CampaignList = pageLimitListOf(CampaignListItem, 'CampaignList', {
  total_records: Type.Integer({ description: 'Campaigns matching the filters, on every page' }),
});
export const DeletedCampaign = Type.Object(
  { object: base.object, id: base.id, deleted: Type.Literal(true, { description: 'Always true' }) },
  { title: 'DeletedCampaign' },
);

export const RecipientsError = Type.Object(
  {
    message: text('What is wrong'),
    errors: Type.Object(
      { recipients: Type.Array(Type.String(), { description: 'What is wrong with the recipients given' }) },
      { additionalProperties: Type.Array(Type.String()), description: 'Messages by field' },
    ),
  },
  { title: 'CampaignRecipientsError', additionalProperties: true },
);

const count = (description: string) => Type.Integer({ description });
export const CampaignReport = Type.Object(
  {
    object: Type.Literal('campaign_report', { description: 'Always campaign_report' }),
    campaign_id: text('cmp_ id'),
    status: Status,
    recipients: count('Recipients in the snapshot taken when sending started (0 before)'),
    pending: count('Recipients whose email is not created yet'),
    sent: count('Emails created and queued for delivery'),
    delivered: count('Emails the recipient server accepted (including those loaded or clicked since)'),
    bounced: count('Emails that bounced'),
    hard_bounced: count('Of those, permanent bounces'),
    failed: count('Emails that failed'),
    complained: count('Emails reported as spam'),
    complaint_rate: Type.Union([Type.Number(), Type.Null()], {
      description:
        'complained / delivered, a fraction (0.003 is 0.3 %); null before any delivery. The guardrails pause the campaign past 0.003',
    }),
    hard_bounce_rate: Type.Union([Type.Number(), Type.Null()], {
      description: 'hard_bounced / (delivered + bounced), a fraction; null before any outcome. The guardrails pause the campaign past 0.05',
    }),
    loaded: count('Loads (opens) of the tracking pixel, every one'),
    clicked: count('Clicks of tracked links, every one'),
    unique_loads: count('Recipients who opened at least once'),
    unique_clicks: count('Recipients who clicked at least once'),
    unsubscribed: count('Recipients who unsubscribed through this campaign'),
    skipped: count('Recipients left out at send time (unsubscribed, suppressed or deleted since the snapshot)'),
    canceled: count('Recipients not sent because the campaign was canceled'),
  },
  { title: 'CampaignReport' },
);
