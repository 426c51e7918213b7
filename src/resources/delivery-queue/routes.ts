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

const tags = ['Delivery'];

export const resource: Resource = {
  name: 'delivery-queue',
  async v2(app, ctx) {
    const workspace = (request: FastifyRequest) => request.principal.workspaceId;

    app.get(
      '/delivery/destinations',
      { schema: { tags, description: 'Traffic shaping per receiving destination: limits, the pace in force, back-off and counts.', response: { 200: S.DestinationList } } },
      async () => ({ data: await destinationStates(ctx.db) }),
    );
    poolRoutes(app, ctx, tags);
    app.get('/delivery/holds', { schema: { tags, description: "The workspace's delivery holds.", response: { 200: S.HoldList } } }, async (request) => ({
      data: (await listHolds(ctx.db, workspace(request))).map(holdObject),
    }));
    app.post(
      '/delivery/holds',
      {
        schema: {
          tags,
          body: S.CreateHoldBody,
          description: "Holds the workspace's queued deliveries (all, or to a destination or recipient domain): they stay queued until released. Emits delivery.held.",
          response: { 201: S.Hold },
        },
      },
      async (request, reply) => reply.code(201).send(holdObject(await createHold(ctx.db, workspace(request), (request.body ?? {}) as Static<typeof S.CreateHoldBody>))),
    );
    app.delete(
      '/delivery/holds/:id',
      { schema: { tags, params: S.IdParams, description: 'Releases a hold; its deliveries go out within 30 seconds. Emits delivery.released.', response: { 200: S.Hold, ...errorResponses({ 404: 'error' }) } } },
      async (request) => holdObject(await releaseHold(ctx.db, workspace(request), (request.params as Static<typeof S.IdParams>).id)),
    );
    app.post(
      '/delivery/purge',
      {
        schema: {
          tags,
          body: S.PurgeBody,
          description: "Cancels the workspace's queued deliveries (accepted or attempted), optionally only those to a recipient domain or destination; each gets email.canceled.",
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
          return { object: 'delivery_purge' as const, ...(await purgeQueue(ctx.db, workspace(request), body, lookup ? (to) => lookup.destinationKeyOf(to) : undefined)) };
        } finally {
          await lookup?.close();
        }
      },
    );
  },
};
