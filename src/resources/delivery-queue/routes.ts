// Queue administration and destination states over the API (docs/delivery.md). Holds and purges act
// on the caller's workspace only; operator holds over every workspace are made with the CLI
// (`postlane delivery …`). Destination states are the shaper's, as the workers last wrote them.
import type { FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import * as S from './schemas.ts';
import { createHold, destinationStates, holdObject, listHolds, purgeQueue, releaseHold } from './service.ts';
import { poolRoutes } from './pool-routes.ts';
import { startWorkspaceWarmup, stopWorkspaceWarmup, warmupObject, workspaceWarmupStates } from '../warmup/service.ts';

const tags = ['Delivery'];
/** Warm-up caps every workspace's mail from a domain name: admins only, and only of the
 *  workspace's own verified domains (source addresses: the operator's CLI). */
const admin = { role: 'admin' as const };

export const resource: Resource = {
  name: 'delivery-queue',
  async v2(app, ctx) {
    const workspace = (request: FastifyRequest) => request.principal.workspaceId;

    app.get(
      '/delivery/destinations',
      {
        schema: {
          tags,
          description: 'Traffic shaping per receiving destination: limits, the pace in force, back-off and counts.',
          response: { 200: S.DestinationList },
        },
      },
      async () => ({ data: await destinationStates(ctx.db) }),
    );
    poolRoutes(app, ctx, tags);
    app.get(
      '/delivery/holds',
      { schema: { tags, description: "The workspace's delivery holds.", response: { 200: S.HoldList } } },
      async (request) => ({
        data: (await listHolds(ctx.db, workspace(request))).map(holdObject),
      }),
    );
    app.post(
      '/delivery/holds',
      {
        schema: {
          tags,
          body: S.CreateHoldBody,
          description:
            "Holds the workspace's queued deliveries (all, or to a destination or recipient domain): they stay queued until released. Emits delivery.held.",
          response: { 201: S.Hold },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(holdObject(await createHold(ctx.db, workspace(request), (request.body ?? {}) as Static<typeof S.CreateHoldBody>))),
    );
    app.delete(
      '/delivery/holds/:id',
      {
        schema: {
          tags,
          params: S.IdParams,
          description: 'Releases a hold; its deliveries go out within 30 seconds. Emits delivery.released.',
          response: { 200: S.Hold, ...errorResponses({ 404: 'error' }) },
        },
      },
      async (request) => holdObject(await releaseHold(ctx.db, workspace(request), (request.params as Static<typeof S.IdParams>).id)),
    );
    app.post(
      '/delivery/purge',
      {
        schema: {
          tags,
          body: S.PurgeBody,
          description:
            "Cancels the workspace's queued deliveries (accepted or attempted), optionally only those to a recipient domain or destination; each gets email.canceled.",
          response: { 200: S.PurgeResult },
        },
      },
      async (request) => {
        const body = (request.body ?? {}) as Static<typeof S.PurgeBody>;
        const { createOutboundDelivery } = await import('../../mail/smtp-delivery.ts');
        const { TrafficShaper } = await import('../../mail/shaping.ts');
        // Destinations are found as the workers find them: MX through DNS_SERVERS, named by the shaper.
        const lookup = body.destination ? createOutboundDelivery(ctx.config, { shaper: new TrafficShaper() }) : null;
        try {
          return {
            object: 'delivery_purge' as const,
            ...(await purgeQueue(ctx.db, workspace(request), body, lookup ? (to) => lookup.destinationKeyOf(to) : undefined)),
          };
        } finally {
          await lookup?.close();
        }
      },
    );
    app.get(
      '/delivery/warmup',
      {
        config: admin,
        schema: {
          tags,
          description:
            "The workspace's verified domains warming up: day N of M, and per destination today's cap, the count sent, tomorrow's cap and the deferred backlog. Source-address warm-ups are listed by the operator's CLI only.",
          response: { 200: S.WarmupList },
        },
      },
      async (request) => ({ data: await workspaceWarmupStates(ctx.db, workspace(request)) }),
    );
    app.post(
      '/delivery/warmup',
      {
        config: admin,
        schema: {
          tags,
          body: S.StartWarmupBody,
          description:
            "Starts warming up one of the workspace's verified sending domains, day 1 today (UTC): its daily volume per destination follows the schedule, the rest is deferred to later days. 404 for a domain that is not a verified domain of the workspace; 403 for `address` (source addresses are shared by every workspace: the operator warms them up with the CLI).",
          response: { 201: S.Warmup, ...errorResponses({ 400: 'message', 403: 'errorMessage', 404: 'errorMessage', 409: 'errorMessage' }) },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await warmupObject(
              ctx.db,
              await startWorkspaceWarmup(ctx.db, workspace(request), (request.body ?? {}) as Static<typeof S.StartWarmupBody>),
            ),
          ),
    );
    app.delete(
      '/delivery/warmup/:id',
      {
        config: admin,
        schema: {
          tags,
          params: S.WarmupParams,
          description:
            "Stops the warm-up of one of the workspace's verified domains (by id or domain): no cap any more, its deferred mail goes out at once. 404 for any other warm-up.",
          response: { 200: S.Warmup, ...errorResponses({ 404: 'errorMessage' }) },
        },
      },
      async (request) => {
        const row = await stopWorkspaceWarmup(ctx.db, workspace(request), (request.params as Static<typeof S.WarmupParams>).id);
        return { ...(await warmupObject(ctx.db, row)), deferred: 0, destinations: [] };
      },
    );
  },
};
