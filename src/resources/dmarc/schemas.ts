// Request and response schemas of the DMARC reports API
// (https://emailit.com/docs/api-reference/dmarc.md,
// https://emailit.com/docs/api-reference/pagination/).
import { Type } from '@sinclair/typebox';
import { nullable } from '../../platform/http/responses.ts';
import { BREAKDOWN_DEFAULT_LIMIT, BREAKDOWN_MAX_LIMIT } from './stats.ts';
import { REPORT_STATUSES, REPORT_TYPES } from './service.ts';

const text = (description: string) => Type.String({ description });
const int = (description: string) => Type.Integer({ description });
const literals = (values: readonly string[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );
const rate = (description: string) => nullable(Type.Number({ description: `${description}, 0 to 1 (4 decimals); null without messages` }));

// ---- Requests ---------------------------------------------------------------------------

export const DomainParams = Type.Object({ id: text('dom_ id (sd_ or sed_ for older domains) or the domain name') });
export const ReportParams = Type.Object({ id: text('dom_ id or the domain name'), report_id: text('dmr_ id of the report') });

const period = {
  from: Type.Optional(text('Reports whose period starts on or after this ISO 8601 date or date-time; a date covers the whole UTC day')),
  to: Type.Optional(text('Reports whose period starts on or before this ISO 8601 date or date-time; a date covers the whole UTC day')),
};
const MAX_OFFSET = 2_147_483_647;
const offset = Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Items to skip' }));
const filters = {
  match: Type.Optional(
    Type.Union([Type.Literal('all'), Type.Literal('or')], { description: 'all (default) or or: how key.condition filters combine' }),
  ),
  order: Type.Optional(text('Sort key: any filter key (created_at, period_start, org_name, message_count, …); default newest first')),
  direction: Type.Optional(text('asc or desc (order without direction sorts ascending)')),
};

export const ReportListQuery = Type.Object(
  {
    type: Type.Optional(literals(REPORT_TYPES, 'aggregate or forensic')),
    status: Type.Optional(literals(REPORT_STATUSES, 'pending, processed, failed or duplicate')),
    org_name: Type.Optional(text('Exact reporting organization, e.g. google.com')),
    ...period,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Page size, 1 to 100' })),
    offset,
    ...filters,
  },
  {
    description:
      'Also key.condition filters on type, status, source, org_name, org_email, report_id, filename, failure_reason, period_start, period_end, processed_at, created_at, record_count, message_count, pass_count',
  },
);

export const ForensicListQuery = Type.Object({
  ...period,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Page size, 1 to 100' })),
  offset,
  ...filters,
});

export const BreakdownQuery = Type.Object({
  ...period,
  org_name: Type.Optional(text('Only the reports of this reporting organization')),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: BREAKDOWN_MAX_LIMIT,
      default: BREAKDOWN_DEFAULT_LIMIT,
      description: `Rows per page, 1 to ${BREAKDOWN_MAX_LIMIT}`,
    }),
  ),
  offset,
});

export const UploadBody = Type.Object({
  content: Type.String({
    description:
      'The report file in base64: aggregate XML (plain, .gz or .zip), or a whole report mail (.eml) holding one aggregate or forensic report',
  }),
  filename: Type.Optional(nullable(Type.String({ maxLength: 255, description: 'File name, kept with the report' }))),
});

// ---- Responses --------------------------------------------------------------------------

const summaryFields = {
  object: Type.Literal('dmarc_report', { description: 'Always dmarc_report' }),
  id: text('dmr_ id'),
  type: literals(REPORT_TYPES, 'aggregate (RFC 7489 XML) or forensic (RFC 6591 failure report)'),
  status: literals(REPORT_STATUSES, 'pending (not read yet), processed, failed (see failure_reason) or duplicate (see duplicate_of)'),
  domain_id: text('dom_ id of the domain'),
  domain: text('The domain name'),
  org_name: nullable(text("Reporting organization (aggregate: org_name; forensic: the domain of the report's sender); null until read")),
  org_email: nullable(text("The reporter's contact address")),
  report_id: nullable(text("The reporter's own report id (forensic: the report's Message-ID); null until read")),
  period_start: nullable(text('Start of the reported period (forensic: when the failing message arrived)')),
  period_end: nullable(text('End of the reported period (forensic: as period_start)')),
  record_count: int('Rows of the aggregate report (0 for forensic, duplicate, failed and pending reports)'),
  message_count: int('Messages the report covers (forensic: 1; duplicate: 0, the original counts them)'),
  pass_count: int('Of those, messages that passed DMARC (aligned SPF or DKIM pass)'),
  fail_count: int('Of those, messages that failed DMARC'),
  pass_rate: rate('pass_count / message_count'),
  source: literals(['email', 'upload'], 'email (arrived at the report address) or upload (through the API)'),
  filename: nullable(text('Name of the attached or uploaded file')),
  failure_reason: nullable(text('Why the report could not be read (status failed)')),
  duplicate_of: nullable(text('dmr_ id of the processed report with the same reporter and report id (status duplicate)')),
  processed_at: nullable(text('When the report was read')),
  created_at: text('When the report arrived'),
  updated_at: text('When it last changed'),
};

export const ReportSummary = Type.Object(summaryFields, { title: 'DmarcReport' });

const Verdict = literals(['pass', 'fail'], 'pass or fail');
const Disposition = text('none, quarantine or reject: what the receiver did');

const DmarcRecord = Type.Object(
  {
    source_ip: text('IP address the messages came from'),
    count: int('Messages from that IP with these results'),
    disposition: Disposition,
    dkim: Type.Union(Verdict.anyOf, { description: 'DKIM verdict after alignment (policy_evaluated)' }),
    spf: Type.Union(Verdict.anyOf, { description: 'SPF verdict after alignment (policy_evaluated)' }),
    dmarc: Type.Union(Verdict.anyOf, { description: 'pass when aligned DKIM or SPF passed' }),
    reasons: Type.Array(
      Type.Object({
        type: text('forwarded, sampled_out, trusted_forwarder, mailing_list, local_policy or other'),
        comment: nullable(text("The receiver's comment")),
      }),
      { description: "Why the receiver applied another disposition than the policy's" },
    ),
    header_from: text('Domain of the From header'),
    envelope_from: nullable(text('Domain of the envelope sender, when reported')),
    envelope_to: nullable(text('Domain of the envelope recipient, when reported')),
    auth_results: Type.Object(
      {
        dkim: Type.Array(
          Type.Object({
            domain: text('Signing domain (d=)'),
            selector: nullable(text('Selector (s=)')),
            result: text('none, pass, fail, policy, neutral, temperror or permerror'),
            human_result: nullable(text("The receiver's words")),
          }),
          { description: 'Every DKIM signature checked, before alignment' },
        ),
        spf: Type.Array(
          Type.Object({
            domain: text('Domain checked'),
            scope: nullable(text('helo or mfrom')),
            result: text('none, neutral, pass, fail, softfail, temperror or permerror'),
          }),
          { description: 'SPF checks, before alignment' },
        ),
      },
      { description: 'Raw authentication results' },
    ),
  },
  { title: 'DmarcRecord' },
);

export const AggregateReport = Type.Object(
  {
    ...summaryFields,
    type: Type.Literal('aggregate', { description: 'Always aggregate' }),
    extra_contact_info: nullable(text("The reporter's extra contact information")),
    policy_published: Type.Object(
      {
        domain: nullable(text('Domain the policy was found for')),
        adkim: nullable(text('DKIM alignment mode: r (relaxed) or s (strict)')),
        aspf: nullable(text('SPF alignment mode: r or s')),
        p: nullable(text('Policy: none, quarantine or reject')),
        sp: nullable(text('Subdomain policy')),
        np: nullable(text('Policy for non-existent subdomains')),
        pct: nullable(Type.Integer({ description: 'Percentage of messages the policy applied to' })),
        fo: nullable(text('Failure reporting options')),
      },
      { description: 'The DMARC record the receiver found (all null until read)' },
    ),
    errors: Type.Array(Type.String(), { description: 'Problems the reporter noted while making the report' }),
    records: Type.Array(DmarcRecord, { description: "The report's rows, in the reporter's order" }),
  },
  { title: 'DmarcAggregateReport' },
);

export const ForensicReport = Type.Object(
  {
    ...summaryFields,
    type: Type.Literal('forensic', { description: 'Always forensic' }),
    feedback_type: text('Always auth-failure'),
    user_agent: nullable(text('The reporting software')),
    version: nullable(text('Report format version')),
    auth_failure: nullable(text('What failed: dmarc, dkim, spf, adsp, bodyhash, revoked or signature')),
    delivery_result: nullable(text('What the receiver did: delivered, spam, policy, reject or other')),
    identity_alignment: nullable(text('Which identifiers aligned: none, spf, dkim or both')),
    source_ip: nullable(text('IP address the failing message came from')),
    arrival_date: nullable(text('When the failing message arrived')),
    original_mail_from: nullable(text('Its envelope sender')),
    original_rcpt_to: nullable(text('Its envelope recipient')),
    original_envelope_id: nullable(text('Its envelope id at the receiver')),
    reported_domain: text('The domain the report is about'),
    reported_uri: nullable(text('URIs in the message the report names')),
    authentication_results: nullable(text("The receiver's Authentication-Results")),
    dkim_domain: nullable(text('DKIM signing domain checked')),
    dkim_identity: nullable(text('DKIM identity (i=)')),
    dkim_selector: nullable(text('DKIM selector')),
    dkim_canonicalized_header: nullable(text('DKIM canonicalized header, base64')),
    spf_dns: nullable(text('The SPF records the receiver used')),
    original_message: Type.Object(
      {
        from: nullable(text('From header')),
        to: nullable(text('To header')),
        subject: nullable(text('Subject header')),
        date: nullable(text('Date header')),
        message_id: nullable(text('Message-ID header')),
      },
      { description: 'Headers of the failing message' },
    ),
    original_headers: nullable(text("The failing message's header block as reported (its body is never kept)")),
  },
  { title: 'DmarcForensicReport' },
);

export const AnyReport = Type.Union([AggregateReport, ForensicReport], { title: 'DmarcReportWithDetail' });

const listMeta = Type.Object(
  { total: int('Items matching the parameters, on every page'), limit: int('Page size'), offset: int('Items skipped') },
  { description: 'Paging' },
);
export const ReportList = Type.Object(
  { data: Type.Array(ReportSummary, { description: 'This page, newest first unless sorted' }), meta: listMeta },
  { title: 'DmarcReportList' },
);
export const ForensicList = Type.Object(
  { data: Type.Array(ForensicReport, { description: 'This page, newest first unless sorted' }), meta: listMeta },
  { title: 'DmarcForensicReportList' },
);

const breakdownMeta = Type.Object({ limit: int('Rows per page'), offset: int('Rows skipped') }, { description: 'Paging' });
const verdictRates = (what: string) =>
  Type.Object(
    { pass: int(`Messages whose ${what} passed`), fail: int(`Messages whose ${what} failed`), pass_rate: rate(`Share of ${what} passes`) },
    { description: what },
  );
const rates = {
  message_count: int('Messages'),
  dmarc: verdictRates('DMARC'),
  spf: verdictRates('aligned SPF'),
  dkim: verdictRates('aligned DKIM'),
  dispositions: Type.Object(
    { none: int('Delivered normally'), quarantine: int('Quarantined (spam folder)'), reject: int('Rejected') },
    { description: 'Messages by what the receiver did' },
  ),
};

export const SourceBreakdown = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          source_ip: text('Sending IP address'),
          ...rates,
          reporter_count: int('Organizations that reported it'),
          first_seen: text('Start of the earliest report period that names it'),
          last_seen: text('Start of the latest report period that names it'),
        },
        { title: 'DmarcSourceStats' },
      ),
      { description: 'One row per source IP, most messages first' },
    ),
    meta: breakdownMeta,
  },
  { title: 'DmarcSourceBreakdown' },
);

export const ReporterBreakdown = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          org_name: text('Reporting organization'),
          ...rates,
          report_count: int('Its processed reports'),
          source_count: int('Distinct source IPs it reported'),
          last_seen: text('Start of its latest report period'),
        },
        { title: 'DmarcReporterStats' },
      ),
      { description: 'One row per reporting organization, most messages first' },
    ),
    meta: breakdownMeta,
  },
  { title: 'DmarcReporterBreakdown' },
);

export const CountryBreakdown = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          country: nullable(
            text(
              'Country of the sending IPs (ISO 3166-1 alpha-2, e.g. US); null for addresses in no known range (private, reserved or unallocated)',
            ),
          ),
          ...rates,
          source_count: int('Distinct source IPs in this country'),
        },
        { title: 'DmarcCountryStats' },
      ),
      { description: 'One row per country, most messages first' },
    ),
    meta: breakdownMeta,
  },
  { title: 'DmarcCountryBreakdown' },
);

export const NetworkBreakdown = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          asn: nullable(
            Type.Integer({ description: 'Autonomous system number that announces the sending IPs; null when no known network does' }),
          ),
          organization: nullable(text('Organization holding the autonomous system, e.g. Google LLC; null with asn')),
          ...rates,
          source_count: int('Distinct source IPs in this network'),
        },
        { title: 'DmarcNetworkStats' },
      ),
      { description: 'One row per network (autonomous system), most messages first' },
    ),
    meta: breakdownMeta,
  },
  { title: 'DmarcNetworkBreakdown' },
);

export const ResultBreakdown = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          spf: Type.Union(Verdict.anyOf, { description: 'SPF verdict after alignment' }),
          dkim: Type.Union(Verdict.anyOf, { description: 'DKIM verdict after alignment' }),
          dmarc: Type.Union(Verdict.anyOf, { description: 'DMARC verdict' }),
          disposition: Disposition,
          message_count: int('Messages with these results'),
          share: rate('Share of all messages'),
        },
        { title: 'DmarcResultStats' },
      ),
      { description: 'One row per combination of results, most messages first' },
    ),
    summary: Type.Object(rates, { description: 'Totals over every row', title: 'DmarcResultSummary' }),
    meta: breakdownMeta,
  },
  { title: 'DmarcResultBreakdown' },
);
