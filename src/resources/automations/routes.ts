// The automations API (https://emailit.com/docs/automations.md). Paths the spec does not show
// follow its conventions: POST /automations/{id} updates, POST …/start, …/pause, …/stop,
// …/trigger; runs under /automations/{id}/runs. Every body is wrapped in `data` (lists in the
// per_page envelope); 404 bodies are `{message}`.
import type { FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import type { Query } from '../../platform/http/lists.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { subscribeToEvents } from '../../platform/events.ts';
import { jobHandler } from '../../platform/jobs.ts';
import * as S from './schemas.ts';
import {
  createAutomation,
  deleteAutomation,
  getAutomation,
  listAutomations,
  pauseAutomation,
  startAutomation,
  stopAutomation,
  updateAutomation,
  validateAutomation,
} from './service.ts';
import { automationCatalog } from './catalog.ts';
import { automationStats, cancelRun, getRun, listRuns, removeContact, statsFilterOf, triggerAutomation } from './runs.ts';
import { automationEventHook, runStepJob, runTriggerJob, STEP_JOB, TRIGGER_JOB } from './engine.ts';
import { dateJob } from './dates.ts';

const tags = ['Automations'];
type Id = Static<typeof S.IdParams>;
type RunId = Static<typeof S.RunParams>;
type StepId = Static<typeof S.StepParams>;
type ContactId = Static<typeof S.ContactParams>;

const notFound = errorResponses({ 404: 'message' });
const invalid = errorResponses({ 400: 'fieldValidation', 404: 'message' });
const refused = errorResponses({ 404: 'message', 409: ['fieldValidation', 'message'], 422: 'message' });

// Steps are short (a webhook call times out after 10 s; the lease is renewed while one runs), so
// a killed worker's steps are taken over within seconds.
const LEASE_MS = 6000;

export const resource: Resource = {
  name: 'automations',
  v2(app, ctx) {
    const ws = (request: FastifyRequest) => request.principal.workspaceId;
    const id = (request: FastifyRequest) => (request.params as Id).id;

    app.post(
      '/automations',
      {
        schema: {
          tags,
          body: S.CreateBody,
          description: "Creates a draft automation; the graph's structure is checked (400 `errors` keyed by field path).",
          response: { 201: S.AutomationData, ...errorResponses({ 400: 'fieldValidation' }) },
        },
      },
      async (request, reply) => reply.code(201).send({ data: await createAutomation(ctx, ws(request), request.body as never) }),
    );
    app.get(
      '/automations/catalog',
      {
        schema: {
          tags,
          summary: 'The trigger and action catalogue',
          description:
            'Every trigger and action with its title, description, contexts and config as JSON Schema (what an automation builder draws its forms from).',
          response: { 200: S.Catalog },
        },
      },
      async () => ({
        data: automationCatalog(),
      }),
    );
    app.post(
      '/automations/validate',
      {
        schema: {
          tags,
          summary: 'Check an automation without saving it',
          body: S.ValidateBody,
          description:
            "Runs the checks of create with every action's config checked as update and start check it; nothing is saved. 200 with `valid` and `errors` keyed by field path.",
          response: { 200: S.Validation, ...errorResponses({ 400: 'fieldValidation' }) },
        },
      },
      async (request) => ({ data: await validateAutomation(ctx, ws(request), request.body as never) }),
    );
    app.get('/automations', { schema: { tags, querystring: S.ListQuery, response: { 200: S.AutomationList } } }, async (request) =>
      listAutomations(ctx.db, ws(request), request.query as Query, request.url),
    );
    app.get(
      '/automations/:id',
      { schema: { tags, params: S.IdParams, response: { 200: S.AutomationData, ...notFound } } },
      async (request) => ({
        data: await getAutomation(ctx.db, ws(request), id(request)),
      }),
    );
    app.post(
      '/automations/:id',
      {
        schema: {
          tags,
          params: S.IdParams,
          body: S.UpdateBody,
          description:
            "Updates the given fields; the graph and every action's config are checked. A running automation's triggers change at once.",
          response: { 200: S.AutomationData, ...invalid },
        },
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) => ({ data: await updateAutomation(ctx, ws(request), id(request), request.body as never) }),
    );
    app.delete(
      '/automations/:id',
      {
        schema: {
          tags,
          params: S.IdParams,
          description: 'Deletes the automation with its runs; running runs stop.',
          response: { 200: S.DeletedAutomation, ...notFound },
        },
      },
      async (request) => ({
        data: await deleteAutomation(ctx.db, ws(request), id(request)),
      }),
    );
    app.post(
      '/automations/:id/start',
      {
        schema: {
          tags,
          params: S.IdParams,
          description:
            'Starts (or resumes) the automation: every config is checked; from now on matching events start runs (3 credits each).',
          response: { 200: S.AutomationData, ...invalid },
        },
      },
      async (request) => ({
        data: await startAutomation(ctx, ws(request), id(request)),
      }),
    );
    app.post(
      '/automations/:id/pause',
      {
        schema: {
          tags,
          params: S.IdParams,
          description:
            'Pauses a running automation: its triggers are ignored and its runs hold at their next step until it is started again.',
          response: { 200: S.AutomationData, ...refused },
        },
      },
      async (request) => ({
        data: await pauseAutomation(ctx.db, ws(request), id(request)),
      }),
    );
    app.post(
      '/automations/:id/stop',
      {
        schema: {
          tags,
          params: S.IdParams,
          description: 'Stops the automation: triggers are ignored and running runs end canceled.',
          response: { 200: S.AutomationData, ...refused },
        },
      },
      async (request) => ({
        data: await stopAutomation(ctx.db, ws(request), id(request)),
      }),
    );
    app.post(
      '/automations/:id/trigger',
      {
        schema: {
          tags,
          params: S.IdParams,
          body: S.TriggerBody,
          description: 'Runs a running automation with a system.manual trigger once now (201 with the run; 409 when a setting skipped it).',
          response: { 201: S.RunData, ...refused },
        },
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request, reply) =>
        reply.code(201).send({
          data: await triggerAutomation(ctx, ws(request), id(request), (request.body as Static<typeof S.TriggerBody>).payload ?? {}),
        }),
    );
    app.get(
      '/automations/:id/runs',
      { schema: { tags, params: S.IdParams, querystring: S.RunsQuery, response: { 200: S.RunList, ...notFound } } },
      async (request) => listRuns(ctx.db, ws(request), id(request), request.query as Query, request.url),
    );
    app.get(
      '/automations/:id/runs/:run_id',
      { schema: { tags, params: S.RunParams, response: { 200: S.RunData, ...notFound } } },
      async (request) => {
        const p = request.params as RunId;
        return { data: await getRun(ctx.db, ws(request), p.id, p.run_id) };
      },
    );
    app.post(
      '/automations/:id/runs/:run_id/cancel',
      {
        schema: {
          tags,
          params: S.RunParams,
          description: 'Cancels a running run: its waiting and running steps end.',
          response: { 200: S.RunData, ...refused },
        },
      },
      async (request) => {
        const p = request.params as RunId;
        return { data: await cancelRun(ctx.db, ws(request), p.id, p.run_id) };
      },
    );
    app.delete(
      '/automations/:id/contacts/:contact_id',
      {
        schema: {
          tags,
          params: S.ContactParams,
          description: 'Removes a contact from the automation: its running runs end canceled.',
          response: { 200: S.RemovedContact, ...notFound },
        },
      },
      async (request) => {
        const p = request.params as ContactId;
        return { data: await removeContact(ctx.db, ws(request), p.id, p.contact_id) };
      },
    );
    app.get(
      '/automations/:id/stats',
      { schema: { tags, params: S.IdParams, querystring: S.StatsQuery, response: { 200: S.StatsData, ...invalid } } },
      async (request) => ({
        data: await automationStats(ctx.db, ws(request), id(request), statsFilterOf(request.query as Query)),
      }),
    );
    app.get(
      '/automations/:id/steps/:step_key/stats',
      { schema: { tags, params: S.StepParams, querystring: S.StepStatsQuery, response: { 200: S.StepStatsData, ...invalid } } },
      async (request) => {
        const p = request.params as StepId;
        const stats = await automationStats(ctx.db, ws(request), p.id, statsFilterOf(request.query as Query), p.step_key);
        return { data: stats[p.step_key] };
      },
    );
  },
  registerJobs() {
    subscribeToEvents(automationEventHook); // one object: registering twice subscribes once
  },
  jobs: (ctx) => ({
    handlers: [
      // Many trigger jobs at once: on SQLite their run starts then share group commits.
      jobHandler(TRIGGER_JOB, (job) => runTriggerJob(ctx, job), { concurrency: 64, leaseMs: LEASE_MS }),
      jobHandler(STEP_JOB, (job) => runStepJob(ctx, job), { concurrency: 32, leaseMs: LEASE_MS }),
      dateJob(ctx),
    ],
  }),
};
