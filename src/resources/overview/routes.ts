// Our own read-only endpoints for a workspace's overview (the dashboard's first page, and any
// client's): mail activity per day, and the workspace's plan, credits and limits in use.
import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { emailStats, workspaceSummary } from './service.ts';
import { deliverabilityStats } from './deliverability.ts';
import { campaignStats } from './campaign-stats.ts';
import { errorResponses } from '../../platform/http/responses.ts';

const tags = ['Overview'];
const count = (what: string) => Type.Integer({ description: what });
const rate = (what: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${what}, as a fraction (0.003 is 0.3 %); null before any message counts` });
const level = (what: string) =>
  Type.Union([Type.Literal('ok'), Type.Literal('warning'), Type.Literal('over_limit')], {
    description: `${what} against the thresholds: ok (below recommended), warning (between), over_limit (at or past the limit)`,
  });
// The counting rule is documented in docs/dashboard.md ("How mail is counted").
const counts = {
  sent: count(
    'Outbound emails created in the bucket (one per recipient; API, SMTP, campaigns, automations, retries), except those that never left: suppressed, rejected, canceled, held or still scheduled',
  ),
  delivered: count("Of those, accepted by the recipient's server (opened, clicked or complained since included)"),
  bounced: count('Of those, bounced'),
  hard_bounced: count('Of the bounced, permanent bounces'),
  complained: count('Of those, reported as spam (feedback loops)'),
  opened: count('Of those, opened or clicked (unique: each email once)'),
  clicked: count('Of those, clicked (unique: each email once)'),
};
const rates = {
  delivery_rate: rate('delivered / sent'),
  bounce_rate: rate('bounced / sent'),
  hard_bounce_rate: rate('hard_bounced / (delivered + bounced)'),
  hard_bounce_level: level('The hard-bounce rate'),
  complaint_rate: rate('complained / delivered'),
  complaint_level: level('The complaint rate'),
  open_rate: rate('opened / delivered'),
  click_rate: rate('clicked / delivered'),
};
const Threshold = (what: string) =>
  Type.Object(
    {
      recommended: Type.Number({ description: `Stay below this ${what} (a fraction)` }),
      limit: Type.Number({
        description: `Past this ${what} receivers filter or refuse the mail, and the guardrails pause a campaign (a fraction)`,
      }),
    },
    { description: `Thresholds of the ${what}` },
  );
const Thresholds = Type.Object(
  { complaint_rate: Threshold('complaint rate'), hard_bounce_rate: Threshold('hard-bounce rate') },
  { description: 'What receivers tolerate (Gmail and Yahoo sender rules for complaints)' },
);

const StatsQuery = Type.Object({
  period: Type.Optional(
    Type.Union([Type.Literal('24h'), Type.Literal('7d'), Type.Literal('30d'), Type.Literal('90d')], {
      description: 'The last 24 hours (hourly buckets) or the last 7, 30 or 90 UTC days (daily buckets); wins over days',
    }),
  ),
  days: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 90, default: 30, description: 'Days to cover, ending today (UTC), when no period is given' }),
  ),
});
const EmailStats = Type.Object(
  {
    object: Type.Literal('email_stats', { description: 'Always email_stats' }),
    period: Type.String({ description: 'The period covered: 24h or the number of days followed by d (30d)' }),
    interval: Type.Union([Type.Literal('day'), Type.Literal('hour')], {
      description: 'Bucket size: one UTC day, or one hour for the last 24 hours',
    }),
    from: Type.String({ description: 'Day of the first bucket (YYYY-MM-DD)' }),
    to: Type.String({ description: 'Day of the last bucket, today (YYYY-MM-DD)' }),
    start: Type.String({ description: 'Start of the first bucket (ISO 8601, UTC)' }),
    end: Type.String({ description: 'End of the last bucket (ISO 8601, UTC)' }),
    thresholds: Thresholds,
    totals: Type.Object({ ...counts, ...rates }, { description: 'Sums over the whole period, with their rates' }),
    data: Type.Array(
      Type.Object({
        date: Type.String({ description: 'The UTC day of the bucket (YYYY-MM-DD)' }),
        start: Type.String({ description: 'Start of the bucket (ISO 8601, UTC)' }),
        ...counts,
        ...rates,
      }),
      { description: 'One entry per bucket, oldest first, buckets without mail included' },
    ),
    providers: Type.Array(
      Type.Object({
        provider: Type.String({ description: 'gmail, microsoft, yahoo, apple or others' }),
        name: Type.String({ description: 'Gmail, Outlook, Yahoo, iCloud or Others' }),
        ...counts,
        ...rates,
      }),
      {
        description:
          "The period by recipient provider, known by the recipient's domain (gmail.com, outlook.com, yahoo.com, icloud.com and their siblings); every provider listed, even without mail",
      },
    ),
    sending_domains: Type.Array(
      Type.Object({
        domain_id: Type.String({ description: 'dom_ id of the sending domain' }),
        name: Type.String({ description: 'The domain name' }),
        ...counts,
        ...rates,
      }),
      { description: 'The period by sending domain, most mail first; domains without mail in the period are left out' },
    ),
  },
  { title: 'EmailStats' },
);
const WorkspaceSummary = Type.Object(
  {
    object: Type.Literal('workspace', { description: 'Always workspace' }),
    id: Type.String({ description: 'wsp_ id' }),
    name: Type.String({ description: 'Workspace name' }),
    plan: Type.String({ description: 'Plan key: payg, pro, business or custom' }),
    plan_name: Type.String({ description: 'Plan name for a person' }),
    credits: Type.Integer({ description: 'Credits left' }),
    verified: Type.Boolean({ description: 'Unverified workspaces may send only to member addresses' }),
    features: Type.Array(Type.String(), { description: 'Feature flags, such as mjml' }),
    send_rate: Type.Integer({ description: 'Sending limit per second' }),
    daily_limit: Type.Integer({ description: 'Sending limit per UTC day' }),
    sent_today: Type.Integer({
      description: 'Emails sent today (UTC), counted as GET /v2/stats/emails counts them: campaign and automation mail included',
    }),
    daily_limit_used: Type.Integer({
      description:
        "Units counted against today's daily limit (API and SMTP sends, automations included; campaign mail is not limited by it)",
    }),
  },
  { title: 'WorkspaceSummary' },
);

const RateWindow = Type.Object(
  {
    delivered: count("Messages the recipients' servers accepted (opened, clicked or complained since included)"),
    complained: count('Of those, reported as spam (feedback loops)'),
    bounced: count('Messages that bounced'),
    hard_bounced: count('Of those, permanent bounces (the address does not exist, the domain does not receive mail)'),
    complaint_rate: rate('complained / delivered'),
    complaint_level: level('The complaint rate'),
    hard_bounce_rate: rate('hard_bounced / (delivered + bounced)'),
    hard_bounce_level: level('The hard-bounce rate'),
  },
  { description: 'Emails created in the window, by what became of them' },
);
const Windows = {
  last_24h: { ...RateWindow, description: 'The last 24 hours' },
  last_7d: { ...RateWindow, description: 'The last 7 days' },
};
const Deliverability = Type.Object(
  {
    object: Type.Literal('deliverability', { description: 'Always deliverability' }),
    thresholds: Thresholds,
    workspace: Type.Object(Windows, { description: 'The whole workspace' }),
    domains: Type.Array(
      Type.Object({
        domain_id: Type.String({ description: 'dom_ id of the sending domain' }),
        name: Type.String({ description: 'The domain name' }),
        ...Windows,
      }),
      { description: 'Each sending domain that sent in the last 7 days, by name' },
    ),
  },
  { title: 'Deliverability' },
);

const CampaignParams = Type.Object({ id: Type.String({ description: 'cmp_ id or URL-encoded name' }) });
const CampaignQuery = Type.Object({
  interval: Type.Optional(
    Type.Union([Type.Literal('hour'), Type.Literal('day')], {
      description: 'Bucket size; by default hours while the hits span three days or less, days after',
    }),
  ),
});
const CampaignStats = Type.Object(
  {
    object: Type.Literal('campaign_stats', { description: 'Always campaign_stats' }),
    campaign_id: Type.String({ description: 'cmp_ id' }),
    interval: Type.Union([Type.Literal('hour'), Type.Literal('day')], { description: 'Bucket size (UTC)' }),
    thresholds: Thresholds,
    data: Type.Array(
      Type.Object({
        start: Type.String({ description: 'Start of the bucket (ISO 8601, UTC)' }),
        opened: count('Opens (every hit of the tracking pixel)'),
        clicked: count('Clicks (every hit of a tracked link)'),
        unique_opened: count('Emails opened in the bucket'),
        unique_clicked: count('Emails clicked in the bucket'),
      }),
      { description: 'From the first open or click to the last (at most 400 buckets, the latest), oldest first; empty before any' },
    ),
    links: Type.Array(
      Type.Object({
        url: Type.String({ description: "The link's target as sent" }),
        clicks: count('Clicks (every hit)'),
        unique_clicks: count('Emails whose recipient clicked it'),
      }),
      { description: 'Each clicked link, most clicks first' },
    ),
  },
  { title: 'CampaignStats' },
);

export const resource: Resource = {
  name: 'overview',
  v2(app, ctx) {
    app.get(
      '/stats/emails',
      {
        schema: {
          tags,
          summary: 'Mail volume and rates over a period, per hour or day, by recipient provider and by sending domain',
          querystring: StatsQuery,
          response: { 200: EmailStats },
        },
      },
      async (request) => {
        const query = request.query as Static<typeof StatsQuery>;
        return emailStats(ctx.db, request.principal.workspaceId, query.period ?? `${query.days ?? 30}d`);
      },
    );
    app.get(
      '/stats/deliverability',
      {
        schema: {
          tags,
          summary: 'Complaint and hard-bounce rates over the last 24 hours and 7 days, per workspace and sending domain',
          response: { 200: Deliverability },
        },
      },
      async (request) => deliverabilityStats(ctx.db, request.principal.workspaceId),
    );
    app.get(
      '/stats/campaigns/:id',
      {
        schema: {
          tags,
          summary: "A campaign's opens and clicks over time, and its clicks per link",
          params: CampaignParams,
          querystring: CampaignQuery,
          response: { 200: CampaignStats, ...errorResponses({ 404: 'error' }) },
        },
      },
      async (request) =>
        campaignStats(
          ctx.db,
          request.principal.workspaceId,
          (request.params as Static<typeof CampaignParams>).id,
          (request.query as Static<typeof CampaignQuery>).interval,
        ),
    );
    app.get(
      '/workspace',
      { schema: { tags, summary: "This workspace: plan, credits, sending limits and today's use", response: { 200: WorkspaceSummary } } },
      async (request) => workspaceSummary(ctx.db, request.principal.workspaceId),
    );
  },
};
