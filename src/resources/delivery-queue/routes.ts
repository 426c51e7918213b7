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
import { startWarmup, stopWarmup, warmupObject, warmupStates } from '../warmup/service.ts';

const tags = ['Delivery'];
/** Warm-up acts on the whole MTA (every workspace's mail from a domain or address): admins only. */
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
            "Domains and source addresses warming up: day N of M, and per destination today's cap, the count sent, tomorrow's cap and the deferred backlog.",
          response: { 200: S.WarmupList },
        },
      },
      async () => ({ data: await warmupStates(ctx.db) }),
    );
    app.post(
      '/delivery/warmup',
      {
        config: admin,
        schema: {
          tags,
          body: S.StartWarmupBody,
          description:
            'Starts warming up a sending domain or source address, day 1 today (UTC): its daily volume per destination follows the schedule, the rest is deferred to later days.',
          response: { 201: S.Warmup, ...errorResponses({ 400: 'message', 409: 'errorMessage' }) },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await warmupObject(ctx.db, await startWarmup(ctx.db, (request.body ?? {}) as Static<typeof S.StartWarmupBody>))),
    );
    app.delete(
      '/delivery/warmup/:id',
      {
        config: admin,
        schema: {
          tags,
          params: S.WarmupParams,
          description: 'Stops a warm-up (by id, domain or address): no cap any more, its deferred mail goes out at once.',
          response: { 200: S.Warmup, ...errorResponses({ 404: 'errorMessage' }) },
        },
      },
      async (request) => {
        const row = await stopWarmup(ctx.db, (request.params as Static<typeof S.WarmupParams>).id);
        return { ...(await warmupObject(ctx.db, row)), deferred: 0, destinations: [] };
      },
    );
  },
};
