import type { Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { jobHandler } from '../../platform/jobs.ts';
import type { Query } from '../../platform/http/lists.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { uploadReport } from './intake.ts';
import { PROCESS_JOB, processReport } from './processing.ts';
import {
  AnyReport,
  BreakdownQuery,
  CountryBreakdown,
  DomainParams,
  ForensicList,
  ForensicListQuery,
  ForensicReport,
  NetworkBreakdown,
  ReportList,
  ReportListQuery,
  ReportParams,
  ReporterBreakdown,
  ResultBreakdown,
  SourceBreakdown,
  UploadBody,
} from './schemas.ts';
import { getForensicReport, getReport, listForensicReports, listReports } from './service.ts';
import { countryBreakdown, networkBreakdown, reporterBreakdown, resultBreakdown, sourceBreakdown } from './stats.ts';

const tags = ['DMARC'];
type Domain = Static<typeof DomainParams>;
type Report = Static<typeof ReportParams>;

// 400 a bad from/to; 403 plan_required below Pro; 404 an unknown domain or report.
const readErrors = errorResponses({ 400: 'error', 403: 'planRequired', 404: 'error' });
// 422 collection off for the domain; 413 a file over the limit.
const uploadErrors = errorResponses({ 400: 'error', 403: 'planRequired', 404: 'error', 413: 'errorMessage', 422: 'error' });

export const resource: Resource = {
  name: 'dmarc',
  v2(app, ctx) {
    const db = ctx.db;
    const workspace = (request: { principal: { workspaceId: string } }) => request.principal.workspaceId;
    app.get(
      '/domains/:id/dmarc/reports',
      { schema: { tags, params: DomainParams, querystring: ReportListQuery, response: { 200: ReportList, ...readErrors } } },
      async (request) => listReports(db, workspace(request), (request.params as Domain).id, request.query as Query),
    );
    app.post(
      '/domains/:id/dmarc/reports',
      { schema: { tags, params: DomainParams, body: UploadBody, response: { 201: AnyReport, ...uploadErrors } } },
      async (request, reply) => {
        const report = await uploadReport(
          ctx,
          workspace(request),
          (request.params as Domain).id,
          request.body as Static<typeof UploadBody>,
        );
        return reply.code(201).send(report);
      },
    );
    app.get(
      '/domains/:id/dmarc/reports/:report_id',
      { schema: { tags, params: ReportParams, response: { 200: AnyReport, ...readErrors } } },
      async (request) => {
        const { id, report_id } = request.params as Report;
        return getReport(db, workspace(request), id, report_id);
      },
    );
    app.get(
      '/domains/:id/dmarc/forensic',
      { schema: { tags, params: DomainParams, querystring: ForensicListQuery, response: { 200: ForensicList, ...readErrors } } },
      async (request) => listForensicReports(db, workspace(request), (request.params as Domain).id, request.query as Query),
    );
    app.get(
      '/domains/:id/dmarc/forensic/:report_id',
      { schema: { tags, params: ReportParams, response: { 200: ForensicReport, ...readErrors } } },
      async (request) => {
        const { id, report_id } = request.params as Report;
        return getForensicReport(db, workspace(request), id, report_id);
      },
    );
    app.get(
      '/domains/:id/dmarc/stats/sources',
      { schema: { tags, params: DomainParams, querystring: BreakdownQuery, response: { 200: SourceBreakdown, ...readErrors } } },
      async (request) => sourceBreakdown(db, workspace(request), (request.params as Domain).id, request.query as Query),
    );
    app.get(
      '/domains/:id/dmarc/stats/reporters',
      { schema: { tags, params: DomainParams, querystring: BreakdownQuery, response: { 200: ReporterBreakdown, ...readErrors } } },
      async (request) => reporterBreakdown(db, workspace(request), (request.params as Domain).id, request.query as Query),
    );
    app.get(
      '/domains/:id/dmarc/stats/results',
      { schema: { tags, params: DomainParams, querystring: BreakdownQuery, response: { 200: ResultBreakdown, ...readErrors } } },
      async (request) => resultBreakdown(db, workspace(request), (request.params as Domain).id, request.query as Query),
    );
    app.get(
      '/domains/:id/dmarc/stats/countries',
      { schema: { tags, params: DomainParams, querystring: BreakdownQuery, response: { 200: CountryBreakdown, ...readErrors } } },
      async (request) => countryBreakdown(db, workspace(request), (request.params as Domain).id, request.query as Query),
    );
    app.get(
      '/domains/:id/dmarc/stats/networks',
      { schema: { tags, params: DomainParams, querystring: BreakdownQuery, response: { 200: NetworkBreakdown, ...readErrors } } },
      async (request) => networkBreakdown(db, workspace(request), (request.params as Domain).id, request.query as Query),
    );
  },
  jobs: (ctx) => ({
    handlers: [jobHandler(PROCESS_JOB, (job) => processReport(ctx.db, (job.payload as { reportId: string }).reportId), { concurrency: 2 })],
  }),
};
