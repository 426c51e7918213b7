// IP pools over the API (docs/delivery.md, "IP pools"): the pools the operator configured
// (DELIVERY_IP_POOLS) and which one the workspace's transactional and bulk mail leave from.
// Any member reads them (as the destinations' states); a workspace admin assigns its own
// workspace's pools; the assignment for every workspace is the operator's (`postlane pools assign`).
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { AppContext } from '../../platform/context.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import * as S from './schemas.ts';
import { assignPools, poolsView } from './pools.ts';

const admin = { role: 'admin' as const };

export function poolRoutes(app: FastifyInstance, ctx: AppContext, tags: string[]): void {
  app.get(
    '/delivery/pools',
    {
      schema: {
        tags,
        description:
          "The IP pools outbound mail can leave from (source addresses and their HELO names), the workspace's assignment and the pool each kind of its mail uses now.",
        response: { 200: S.IpPoolList },
      },
    },
    async (request) => poolsView(ctx.db, ctx.config.ipPools, request.principal.workspaceId),
  );
  app.patch(
    '/delivery/pools/assignment',
    {
      config: admin,
      schema: {
        tags,
        body: S.AssignPoolsBody,
        description:
          "Assigns the workspace's IP pools: `all`, and per kind `transactional` (API, SMTP) and `bulk` (campaigns, automations), which win over `all`; null removes one. Applies to deliveries within seconds.",
        response: { 200: S.IpPoolList, ...errorResponses({ 400: 'fieldValidation' }) },
      },
    },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      await assignPools(ctx.db, ctx.config.ipPools, workspaceId, (request.body ?? {}) as Static<typeof S.AssignPoolsBody>);
      return poolsView(ctx.db, ctx.config.ipPools, workspaceId);
    },
  );
}
