// Request and response bodies of verification lists
// (https://emailit.com/docs/api-reference/email-verifications/lists.md).
import { Type } from '@sinclair/typebox';
import { pageLimitListOf } from '../../platform/http/responses.ts';
import { pageLimitQuery } from '../../platform/http/lists.ts';
import { EmailVerification } from '../email-verifications/index.ts';

const text = (description: string) => Type.String({ description });
const count = (description: string) => Type.Integer({ minimum: 0, description });

export const MAX_LIST_EMAILS = 10_000;
export const LIST_STATUSES = ['processing', 'completed'] as const;

export const CreateListBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, description: 'A name to recognize the list by' }),
  emails: Type.Array(Type.String({ maxLength: 1000 }), {
    minItems: 1,
    maxItems: MAX_LIST_EMAILS,
    description: 'Up to 10,000 addresses; trimmed, lowercased and de-duplicated, invalid ones left out',
  }),
});

export const IdParams = Type.Object({ id: Type.String({ description: 'evl_ id' }) });

export const ListQuery = pageLimitQuery(10, {
  status: Type.Optional(
    Type.Union(
      LIST_STATUSES.map((s) => Type.Literal(s)),
      { description: 'Only lists in this status' },
    ),
  ),
  order: Type.Optional(
    Type.Union(
      ['name', 'status', 'created_at'].map((k) => Type.Literal(k)),
      { description: 'Sort key' },
    ),
  ),
  direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Sort direction' })),
});

export const ResultsQuery = pageLimitQuery(50);

export const ExportQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('xlsx'), Type.Literal('csv')], { default: 'xlsx', description: 'xlsx (default) or csv' })),
});

export const VERIFICATION_RESULT_COUNTS = [
  'safe',
  'role',
  'catch_all',
  'unknown',
  'inbox_full',
  'disabled',
  'disposable',
  'invalid',
] as const;

const Stats = Type.Object(
  {
    total_emails: count('Unique addresses in the list'),
    processed_emails: count('Addresses verified'),
    successful_verifications: count('Verifications that completed'),
    failed_verifications: count('Verifications that could not be completed (DNS did not answer)'),
    pending_emails: count('Addresses still waiting'),
    results: Type.Object(
      Object.fromEntries(
        VERIFICATION_RESULT_COUNTS.map((key) => [
          key,
          count(key === 'catch_all' ? 'Addresses on catch-all domains (whatever their result)' : `Addresses whose result is ${key}`),
        ]),
      ),
      { description: 'Addresses by result' },
    ),
  },
  { description: 'Counts; they keep their starting values until every address is done' },
);

export const VerificationList = Type.Object(
  {
    object: Type.Literal('email_verification_list', { description: 'Always email_verification_list' }),
    id: text('evl_ id'),
    name: text('The name given'),
    status: Type.Union(
      LIST_STATUSES.map((s) => Type.Literal(s)),
      { description: '`processing` until every address is verified, then `completed`' },
    ),
    stats: Stats,
    created_at: text('When it was created'),
    updated_at: text('Last change (completion)'),
  },
  { title: 'EmailVerificationList' },
);

export const CreatedVerificationList = Type.Object(
  {
    ...VerificationList.properties,
    valid_emails_count: count('Addresses given that are valid, duplicates included'),
    unique_emails_count: count('Distinct valid addresses: the ones verified and charged'),
    dispatched_jobs: count('Verifications queued (one per unique address)'),
  },
  { title: 'CreatedEmailVerificationList' },
);

export const VerificationListList = pageLimitListOf(VerificationList, 'EmailVerificationListList');
export const VerificationResults = pageLimitListOf(EmailVerification, 'EmailVerificationListResults');

export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export const ExportResponse = {
  description: 'The results as a spreadsheet (one row per address, in the order given) or CSV',
  content: {
    [XLSX_TYPE]: { schema: Type.String({ format: 'binary', description: 'XLSX workbook with one sheet of results' }) },
    'text/csv': { schema: Type.String({ description: 'CSV with a header row' }) },
  },
};
