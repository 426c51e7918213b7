// Our own read-only endpoints for a workspace's overview (the dashboard's first page, and any
// client's): mail activity per day, and the workspace's plan, credits and limits in use.
import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { emailStats, workspaceSummary } from './service.ts';
import { deliverabilityStats } from './deliverability.ts';

const tags = ['Overview'];
const count = (what: string) => Type.Integer({ description: what });
const counts = {
  sent: count('Emails accepted (email.accepted events)'),
  delivered: count('Deliveries (email.delivered)'),
  bounced: count('Bounces (email.bounced)'),
  complained: count('Complaints (email.complained)'),
  opened: count('Opens (email.loaded)'),
  clicked: count('Clicks (email.clicked)'),
};

const StatsQuery = Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30, description: 'Days to cover, ending today (UTC)' })) });
const EmailStats = Type.Object(
  {
    object: Type.Literal('email_stats', { description: 'Always email_stats' }),
    interval: Type.Literal('day', { description: 'Bucket size: one UTC day' }),
    from: Type.String({ description: 'First day covered (YYYY-MM-DD)' }),
    to: Type.String({ description: 'Last day covered, today (YYYY-MM-DD)' }),
    totals: Type.Object(counts, { description: 'Sums over the whole range' }),
    data: Type.Array(Type.Object({ date: Type.String({ description: 'The UTC day (YYYY-MM-DD)' }), ...counts }), { description: 'One entry per day, oldest first, days without activity included' }),
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
    sent_today: Type.Integer({ description: 'Emails counted against today\'s limit' }),
  },
  { title: 'WorkspaceSummary' },
);

const rate = (what: string) => Type.Union([Type.Number(), Type.Null()], { description: `${what}, as a fraction (0.003 is 0.3 %); null before any message counts` });
const level = (what: string) => Type.Union([Type.Literal('ok'), Type.Literal('warning'), Type.Literal('over_limit')], { description: `${what} against the thresholds: ok (below recommended), warning (between), over_limit (at or past the limit)` });
const RateWindow = Type.Object({
  delivered: count('Messages the recipients\' servers accepted (opened, clicked or complained since included)'),
  complained: count('Of those, reported as spam (feedback loops)'),
  bounced: count('Messages that bounced'),
  hard_bounced: count('Of those, permanent bounces (the address does not exist, the domain does not receive mail)'),
  complaint_rate: rate('complained / delivered'),
  complaint_level: level('The complaint rate'),
  hard_bounce_rate: rate('hard_bounced / (delivered + bounced)'),
  hard_bounce_level: level('The hard-bounce rate'),
}, { description: 'Emails created in the window, by what became of them' });
const Threshold = (what: string) => Type.Object({
  recommended: Type.Number({ description: `Stay below this ${what} (a fraction)` }),
  limit: Type.Number({ description: `Past this ${what} receivers filter or refuse the mail, and the guardrails pause a campaign (a fraction)` }),
}, { description: `Thresholds of the ${what}` });
const Windows = {
  last_24h: { ...RateWindow, description: 'The last 24 hours' },
  last_7d: { ...RateWindow, description: 'The last 7 days' },
};
const Deliverability = Type.Object(
  {
    object: Type.Literal('deliverability', { description: 'Always deliverability' }),
    thresholds: Type.Object({ complaint_rate: Threshold('complaint rate'), hard_bounce_rate: Threshold('hard-bounce rate') }, { description: 'What receivers tolerate (Gmail and Yahoo sender rules for complaints)' }),
    workspace: Type.Object(Windows, { description: 'The whole workspace' }),
    domains: Type.Array(
      Type.Object({ domain_id: Type.String({ description: 'dom_ id of the sending domain' }), name: Type.String({ description: 'The domain name' }), ...Windows }),
      { description: 'Each sending domain that sent in the last 7 days, by name' },
    ),
  },
  { title: 'Deliverability' },
);

export const resource: Resource = {
  name: 'overview',
  v2(app, ctx) {
    app.get('/stats/emails', { schema: { tags, summary: 'Mail activity per day', querystring: StatsQuery, response: { 200: EmailStats } } }, async (request) =>
      emailStats(ctx.db, request.principal.workspaceId, (request.query as Static<typeof StatsQuery>).days ?? 30),
    );
    app.get('/stats/deliverability', { schema: { tags, summary: 'Complaint and hard-bounce rates over the last 24 hours and 7 days, per workspace and sending domain', response: { 200: Deliverability } } }, async (request) =>
      deliverabilityStats(ctx.db, request.principal.workspaceId),
    );
    app.get('/workspace', { schema: { tags, summary: 'This workspace: plan, credits, sending limits and today\'s use', response: { 200: WorkspaceSummary } } }, async (request) =>
      workspaceSummary(ctx.db, request.principal.workspaceId),
    );
  },
};
