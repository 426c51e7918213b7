// The campaigns API (https://emailit.com/docs/api-reference/campaigns.md): thin handlers over
// service.ts; the fan-out engine's job (engine.ts); the recipient personalization handed to the
// delivery engine; and the hosted unsubscribe page.
import type { FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import type { Query } from '../../platform/http/lists.ts';
import { jobHandler } from '../../platform/jobs.ts';
import { subscribeToEvents } from '../../platform/events.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { forgetPersonalizers, registerPersonalizer } from '../emails/service.ts';
import * as S from './schemas.ts';
import {
  archiveCampaign,
  cancelCampaign,
  createCampaign,
  deleteCampaign,
  getCampaign,
  listCampaigns,
  pauseCampaign,
  resumeCampaign,
  sendCampaign,
  updateCampaign,
} from './service.ts';
import { CampaignEngine, FANOUT_JOB, FANOUT_LEASE_MS } from './engine.ts';
import { campaignReport } from './report.ts';
import { GUARDRAILS_JOB, guardrailsEventHook, runGuardrailsJob } from './guardrails.ts';
import { registerUnsubscribePages, unsubscribeMailbox, unsubscribeUrl } from './unsubscribe.ts';
import { campaignMergeValues } from './merge-values.ts';
import { registerWritingRoutes } from './writing-routes.ts';

const tags = ['Campaigns'];
type Id = Static<typeof S.IdParams>;
/** Fan-out jobs running at once per process (each turns batches of recipients into emails). */
const FANOUT_CONCURRENCY = 2;

const notFound = errorResponses({ 404: 'error' });
const stateErrors = errorResponses({ 404: 'error', 409: 'errorMessage' });

export const resource: Resource = {
  name: 'campaigns',
  v2(app, ctx) {
    const workspace = (request: FastifyRequest) => request.principal.workspaceId;
    const id = (request: FastifyRequest) => (request.params as Id).id;

    app.post('/campaigns', { schema: { tags, body: S.CreateBody, response: { 201: S.CreatedCampaign } } }, async (request, reply) =>
      reply.code(201).send(await createCampaign(ctx.db, workspace(request), request.body as Static<typeof S.CreateBody>)),
    );
    app.get('/campaigns', { schema: { tags, querystring: S.ListQuery, response: { 200: S.CampaignList } } }, async (request) =>
      listCampaigns(ctx.db, workspace(request), request.query as Query, request.url),
    );
    app.get('/campaigns/:id', { schema: { tags, params: S.IdParams, response: { 200: S.Campaign, ...notFound } } }, async (request) =>
      getCampaign(ctx.db, workspace(request), id(request)),
    );
    app.post(
      '/campaigns/:id',
      {
        schema: { tags, params: S.IdParams, body: S.UpdateBody, response: { 200: S.Campaign, 422: S.RecipientsError, ...stateErrors } },
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) => updateCampaign(ctx.db, workspace(request), id(request), request.body as Static<typeof S.UpdateBody>),
    );
    app.delete(
      '/campaigns/:id',
      {
        schema: {
          tags,
          params: S.IdParams,
          description: 'Permanent; only for a campaign that has not been sent (a scheduled one is deleted to stop it).',
          response: { 200: S.DeletedCampaign, ...stateErrors },
        },
      },
      async (request) => deleteCampaign(ctx.db, workspace(request), id(request)),
    );
    app.post(
      '/campaigns/:id/send',
      {
        schema: {
          tags,
          params: S.IdParams,
          body: S.SendBody,
          description:
            'Sends a draft now, or schedules it for a future scheduled_at. Needs a verified workspace (403), from_email on a verified domain, a subject, html or text with an {{unsubscribe_url}}, an included audience with subscribed contacts (422 naming each missing prerequisite), and credits for the first batch (402; 2 per email, charged as each batch is enqueued).',
          response: {
            200: S.Campaign,
            ...errorResponses({ 402: 'errorMessage', 404: 'error', 409: 'errorMessage', 422: 'fieldValidation' }),
          },
        },
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) => sendCampaign(ctx, request.principal, id(request), (request.body as Static<typeof S.SendBody>).scheduled_at),
    );
    const action = (path: string, description: string, run: typeof cancelCampaign) =>
      app.post(
        `/campaigns/:id/${path}`,
        { schema: { tags, params: S.IdParams, description, response: { 200: S.Campaign, ...stateErrors } } },
        async (request) => run(ctx.db, workspace(request), id(request)),
      );
    action(
      'cancel',
      'Cancels a draft or sending campaign: recipients not yet enqueued are dropped (emails already created are not recalled). A scheduled campaign cannot be canceled: delete it.',
      cancelCampaign,
    );
    action('pause', 'Pauses a sending campaign within one batch; resume continues where it stopped.', pauseCampaign);
    action('resume', 'Resumes a paused campaign.', resumeCampaign);
    action(
      'archive',
      'Archives a draft, sent or canceled campaign (lists show archived ones with status=archived or all).',
      archiveCampaign,
    );
    app.get(
      '/campaigns/:id/report',
      {
        schema: {
          tags,
          params: S.IdParams,
          description: "The campaign's figures, counted live (correct while it is still sending).",
          response: { 200: S.CampaignReport, ...notFound },
        },
      },
      async (request) => campaignReport(ctx.db, workspace(request), id(request)),
    );
    registerWritingRoutes(app, ctx);
  },

  public: (app, ctx) => registerUnsubscribePages(app, ctx),

  jobs(ctx) {
    const engine = new CampaignEngine(ctx);
    return {
      handlers: [
        jobHandler(FANOUT_JOB, (job) => engine.run(job), { concurrency: FANOUT_CONCURRENCY, leaseMs: FANOUT_LEASE_MS }),
        jobHandler(GUARDRAILS_JOB, runGuardrailsJob, { concurrency: 2 }),
      ],
    };
  },

  registerJobs(ctx) {
    // Complaints and hard bounces of campaign mail queue a check of the campaign's rates.
    subscribeToEvents(guardrailsEventHook);
    // Each recipient's copy: merge values from the contact as it is now, and its unsubscribe links.
    registerPersonalizer(ctx.db, 'campaign', async (email) => {
      const row = await ctx.db
        .selectFrom('campaign_recipients as r')
        .leftJoin('contacts as c', 'c.id', 'r.contact_id')
        .select(['r.campaign_id', 'r.contact_id', 'c.first_name', 'c.last_name', 'c.custom_fields'])
        .where('r.email_id', '=', email.id)
        .executeTakeFirst();
      if (!row) return { to: email.to, values: { email: email.to } };
      const url = unsubscribeUrl(ctx, row.campaign_id, row.contact_id);
      return {
        to: email.to,
        values: campaignMergeValues({ ...row, email: email.to }, url),
        listUnsubscribe: {
          url,
          mailto: `mailto:${unsubscribeMailbox(ctx, email.id, email.from_address)}?subject=unsubscribe`,
          oneClick: true,
        },
        untracked: [url],
      };
    });
  },

  async start(ctx) {
    return async () => {
      forgetPersonalizers(ctx.db);
    };
  },
};
