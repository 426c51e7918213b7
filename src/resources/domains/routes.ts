import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { pageLimitQuery, type Query } from '../../platform/http/lists.ts';
import { createDomain, deleteDomain, getDomain, listDomains, updateDomain, verifyDomain } from './service.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { DeletedDomain, Domain, DomainList, VerifiedDomain } from './schemas.ts';
import { recheckJob } from './recheck.ts';

const tags = ['Domains'];
const IdParams = Type.Object({ id: Type.String({ description: 'dom_ id (sd_ or sed_ for older domains) or the domain name' }) });
type Id = Static<typeof IdParams>;

// Tracking flags are booleans in requests; 1/0 (the object's own form) is accepted too.
const Flag = Type.Union([Type.Boolean(), Type.Literal(0), Type.Literal(1)]);
const Label = Type.Union([Type.String(), Type.Null()]);
const Legacy = {
  outgoing: Type.Optional(Type.Unknown({ description: 'legacy flag, accepted and ignored' })),
  incoming: Type.Optional(Type.Unknown({ description: 'legacy flag, accepted and ignored' })),
  use_for_any: Type.Optional(Type.Unknown({ description: 'legacy flag, accepted and ignored' })),
};

const CreateBody = Type.Object({
  name: Type.String({ description: 'apex domain, such as example.com' }),
  tracking_key: Type.Optional(Type.Union([Label], { description: 'tracking subdomain label (default go)' })),
  inbound_key: Type.Optional(Type.Union([Label], { description: 'inbound subdomain label (default inbound)' })),
  dmarc_reports: Type.Optional(Type.Boolean({ description: 'DMARC report collection (Pro, Business and Custom plans)' })),
  track_loads: Type.Optional(Flag),
  track_clicks: Type.Optional(Flag),
  ...Legacy,
});

const UpdateBody = Type.Object({
  tracking_key: Type.Optional(Label),
  inbound_key: Type.Optional(Label),
  dmarc_reports: Type.Optional(Type.Boolean()),
  track_loads: Type.Optional(Flag),
  track_clicks: Type.Optional(Flag),
  ...Legacy,
});

const ListQuery = pageLimitQuery(10, {
  // Documented here; values that do not apply are ignored by the list module, not rejected.
  order: Type.Optional(Type.String({ description: 'sort key: any filter key (name, created_at, verification_status, …)' })),
  direction: Type.Optional(Type.String({ description: 'asc or desc (order without direction sorts ascending)' })),
});

const notFound = errorResponses({ 404: 'error' });
// 400 bad name or labels; 403 DMARC reports on a plan without them; 422 tracking before its
// CNAME is verified, or the plan's domain limit.
const writeErrors = errorResponses({ 400: 'error', 403: 'planRequired', 404: 'error', 422: 'error' });

export const resource: Resource = {
  name: 'domains',
  v2(app, ctx) {
    app.post(
      '/domains',
      { schema: { tags, body: CreateBody, response: { 201: Domain, ...writeErrors, ...errorResponses({ 409: 'conflict' }) } } },
      async (request, reply) => {
        const domain = await createDomain(ctx, request.principal.workspaceId, request.body as Static<typeof CreateBody>);
        return reply.code(201).send(domain);
      },
    );
    app.get('/domains', { schema: { tags, querystring: ListQuery, response: { 200: DomainList } } }, async (request) =>
      listDomains(ctx, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get('/domains/:id', { schema: { tags, params: IdParams, response: { 200: Domain, ...notFound } } }, async (request) =>
      getDomain(ctx, request.principal.workspaceId, (request.params as Id).id),
    );
    app.patch(
      '/domains/:id',
      { schema: { tags, params: IdParams, body: UpdateBody, response: { 200: Domain, ...writeErrors } } },
      async (request) =>
        updateDomain(ctx, request.principal.workspaceId, (request.params as Id).id, (request.body ?? {}) as Static<typeof UpdateBody>),
    );
    app.delete('/domains/:id', { schema: { tags, params: IdParams, response: { 200: DeletedDomain, ...notFound } } }, async (request) =>
      deleteDomain(ctx, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/domains/:id/verify',
      { schema: { tags, params: IdParams, response: { 200: VerifiedDomain, ...notFound } } },
      async (request) => verifyDomain(ctx, request.principal.workspaceId, (request.params as Id).id),
    );
  },
  jobs: (ctx) => ({ handlers: [recheckJob(ctx)] }),
};
