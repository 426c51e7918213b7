// Response bodies of the domains API (https://emailit.com/docs/domains.md).
import { Type, type TProperties } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';

const text = (description: string) => Type.String({ description });
const literals = (values: readonly string[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );
const RecordStatus = literals(['pending', 'ok', 'missing', 'invalid', 'error'], 'Result of the last DNS check of the record');
const flag = (description: string) => Type.Union([Type.Literal(0), Type.Literal(1)], { description });

const DnsRecord = Type.Object(
  {
    type: literals(['MX', 'TXT', 'CNAME'], 'Record type'),
    name: text('Host name to publish at'),
    value: text('Value to publish'),
    priority: nullable(Type.Integer({ description: 'MX priority; null for other types' })),
    ttl: Type.Literal('auto', { description: 'Any TTL works' }),
    required: Type.Boolean({ description: 'Needed for sending (else it enables a feature)' }),
    status: RecordStatus,
    error: nullable(text('Why the record does not check out')),
  },
  { title: 'DnsRecord' },
);

const recordStatus = (what: string) => Type.Union(RecordStatus.anyOf, { description: `Status of the ${what} record` });
const recordError = (what: string) => nullable(text(`Why the ${what} record does not check out`));

const head = {
  object: Type.Literal('domain', { description: 'Always domain' }),
  id: text('dom_ id'),
  name: text('The domain, lowercase'),
  verification_status: literals(['verified', 'pending', 'pending_review'], 'Whether mail may be sent from it'),
  verified_at: nullable(text('When it was verified')),
  manual_review_required: Type.Boolean({ description: "A recently registered domain waits for an operator's review" }),
  manually_verified_at: nullable(text('When an operator approved it')),
  dns_checked_at: nullable(text('When its records were last checked')),
  spf_status: recordStatus('SPF'),
  dkim_status: recordStatus('DKIM'),
  return_path_status: recordStatus('return-path MX'),
  mx_status: recordStatus('return-path MX'),
  dmarc_status: recordStatus('DMARC'),
  tracking_status: recordStatus('tracking CNAME'),
  inbound_status: recordStatus('inbound MX'),
  spf_error: recordError('SPF'),
  dkim_error: recordError('DKIM'),
  mx_error: recordError('return-path MX'),
  return_path_error: recordError('return-path MX'),
  dmarc_error: recordError('DMARC'),
  tracking_error: recordError('tracking CNAME'),
  inbound_error: recordError('inbound MX'),
  tracking_key: nullable(text('Label of the tracking subdomain')),
  inbound_key: nullable(text('Label of the inbound subdomain')),
  track_loads: flag('1 when opens are tracked'),
  track_clicks: flag('1 when clicks are tracked'),
} satisfies TProperties;
const dmarc = {
  dmarc_reports: Type.Boolean({ description: 'DMARC reports are collected' }),
  dmarc_address: nullable(text('Where receivers send DMARC reports; null while collection is off')),
};
const tail = {
  verification_token: text("Token of the domain's verification"),
  verification_method: Type.Literal('dns', { description: 'Always dns' }),
  dkim_identifier_string: text('DKIM selector'),
  created_at: text('When it was added'),
  updated_at: text('When it last changed'),
  dns_records: Type.Array(DnsRecord, { description: 'The records to publish, with their status' }),
};

export const Domain = Type.Object({ ...head, ...dmarc, ...tail }, { title: 'Domain' });

/** POST /domains/{id}/verify: the domain without the DMARC report fields (spec). */
export const VerifiedDomain = Type.Object({ ...head, ...tail }, { title: 'VerifiedDomain' });

export const DomainList = pageLimitListOf(Domain, 'DomainList', {
  domain_limit: nullable(Type.Integer({ description: 'Domains the plan allows; null for no limit' })),
  domain_count: Type.Integer({ description: 'Domains in the workspace' }),
  plan_name: text("The workspace's plan"),
});

export const DeletedDomain = Type.Object(
  {
    object: Type.Literal('domain', { description: 'Always domain' }),
    id: text('dom_ id'),
    name: text('The domain'),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'DeletedDomain' },
);
