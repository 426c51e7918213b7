// /v2/email-verification-lists
// (https://emailit.com/docs/api-reference/email-verifications/lists.md) and the job that verifies a
// list's addresses.
import type { Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { jobHandler } from '../../platform/jobs.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import type { Query } from '../../platform/http/lists.ts';
import * as S from './schemas.ts';
import { createList, getList, listLists, listName, listResults, listVerifications, VERIFY_LIST_JOB } from './service.ts';
import { exportWorkbook } from './export.ts';
import { ListVerifier } from './worker.ts';

const tags = ['Email verification lists'];
type Id = Static<typeof S.IdParams>;
const notFound = errorResponses({ 404: 'error' });

/** A file name made of the list's name, safe in a header. */
function fileName(name: string, extension: string): string {
  const base =
    name
      .replace(/[^A-Za-z0-9._ -]+/g, '_')
      .trim()
      .slice(0, 100) || 'verification-list';
  return `${base}.${extension}`;
}

export const resource: Resource = {
  name: 'email-verification-lists',
  v2(app, ctx) {
    app.post(
      '/email-verification-lists',
      {
        schema: {
          tags,
          summary: 'Create a verification list',
          description: '5 credits per unique address, charged up front; verified in the background in full mode.',
          body: S.CreateListBody,
          response: { 201: S.CreatedVerificationList, ...errorResponses({ 402: 'errorMessage' }) },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await createList(ctx.db, request.principal.workspaceId, request.body as Static<typeof S.CreateListBody>)),
    );
    app.get(
      '/email-verification-lists',
      { schema: { tags, summary: 'List verification lists', querystring: S.ListQuery, response: { 200: S.VerificationListList } } },
      async (request) => listLists(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get(
      '/email-verification-lists/:id',
      { schema: { tags, summary: 'Retrieve a verification list', params: S.IdParams, response: { 200: S.VerificationList, ...notFound } } },
      async (request) => getList(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
    app.get(
      '/email-verification-lists/:id/results',
      {
        schema: {
          tags,
          summary: "A list's verifications, in the order given",
          params: S.IdParams,
          querystring: S.ResultsQuery,
          response: { 200: S.VerificationResults, ...notFound },
        },
      },
      async (request) => listResults(ctx.db, request.principal.workspaceId, (request.params as Id).id, request.query as Query, request.url),
    );
    app.get(
      '/email-verification-lists/:id/export',
      {
        schema: {
          tags,
          summary: "A list's results as XLSX (or CSV)",
          params: S.IdParams,
          querystring: S.ExportQuery,
          response: { 200: S.ExportResponse, ...notFound },
        },
      },
      async (request, reply) => {
        const { workspaceId } = request.principal;
        const { id } = request.params as Id;
        const format = (request.query as Static<typeof S.ExportQuery>).format ?? 'xlsx';
        const name = await listName(ctx.db, workspaceId, id);
        const file = await exportWorkbook(listVerifications(ctx.db, workspaceId, id), format);
        return reply
          .type(format === 'xlsx' ? S.XLSX_TYPE : 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${fileName(name, format)}"`)
          .send(file);
      },
    );
  },
  jobs(ctx) {
    const verifier = new ListVerifier(ctx);
    return { handlers: [jobHandler(VERIFY_LIST_JOB, (job) => verifier.run(job))] };
  },
};
