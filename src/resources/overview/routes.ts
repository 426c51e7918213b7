// Our own read-only endpoints for a workspace's overview (the dashboard's first page, and any
// client's): mail activity per day, and the workspace's plan, credits and limits in use.
import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { emailStats, workspaceSummary } from './service.ts';

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

export const resource: Resource = {
  name: 'overview',
  v2(app, ctx) {
    app.get('/stats/emails', { schema: { tags, summary: 'Mail activity per day', querystring: StatsQuery, response: { 200: EmailStats } } }, async (request) =>
      emailStats(ctx.db, request.principal.workspaceId, (request.query as Static<typeof StatsQuery>).days ?? 30),
    );
    app.get('/workspace', { schema: { tags, summary: 'This workspace: plan, credits, sending limits and today\'s use', response: { 200: WorkspaceSummary } } }, async (request) =>
      workspaceSummary(ctx.db, request.principal.workspaceId),
    );
  },
};
