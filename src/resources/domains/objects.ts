// The domain object of the API (https://emailit.com/docs/domains.md) and the event payloads
// (https://emailit.com/docs/webhooks/event-types.md). The sealed private key never leaves the row.
import type { Selectable } from 'kysely';
import { dnsRecordsOf, type RecordTargets } from './dns-records.ts';
import type { DomainsTable } from './tables.ts';

export type DomainRow = Selectable<DomainsTable>;

export function domainObject(row: DomainRow, targets: RecordTargets) {
  return {
    object: 'domain' as const,
    id: row.id,
    name: row.name,
    verification_status: row.verification_status,
    verified_at: row.verified_at,
    manual_review_required: row.manual_review_required === 1,
    manually_verified_at: row.manually_verified_at,
    dns_checked_at: row.dns_checked_at,
    spf_status: row.spf_status,
    dkim_status: row.dkim_status,
    return_path_status: row.return_path_status,
    // The return-path MX is the domain's only required MX record: mx_* reports it too.
    mx_status: row.return_path_status,
    dmarc_status: row.dmarc_status,
    tracking_status: row.tracking_status,
    inbound_status: row.inbound_status,
    spf_error: row.spf_error,
    dkim_error: row.dkim_error,
    mx_error: row.return_path_error,
    return_path_error: row.return_path_error,
    dmarc_error: row.dmarc_error,
    tracking_error: row.tracking_error,
    inbound_error: row.inbound_error,
    tracking_key: row.tracking_key,
    inbound_key: row.inbound_key,
    track_loads: row.track_loads,
    track_clicks: row.track_clicks,
    dmarc_reports: row.dmarc_reports === 1,
    dmarc_address: row.dmarc_reports === 1 ? row.dmarc_address : null,
    verification_token: row.verification_token,
    verification_method: 'dns' as const,
    dkim_identifier_string: row.dkim_selector,
    created_at: row.created_at,
    updated_at: row.updated_at,
    dns_records: dnsRecordsOf(row, targets),
  };
}

/** The verify response: the domain object without `dmarc_reports` and `dmarc_address` (spec). */
export function verifiedDomainObject(row: DomainRow, targets: RecordTargets) {
  const { dmarc_reports: _reports, dmarc_address: _address, ...rest } = domainObject(row, targets);
  return rest;
}

/** `domain.created` payload; booleans for the tracking flags, as the event examples. */
export function createdEventObject(row: DomainRow, targets: RecordTargets) {
  return {
    id: row.id,
    object: 'domain' as const,
    name: row.name,
    tracking_key: row.tracking_key,
    inbound_key: row.inbound_key,
    track_loads: row.track_loads === 1,
    track_clicks: row.track_clicks === 1,
    created_at: row.created_at,
    dns_records: dnsRecordsOf(row, targets),
  };
}

/** `domain.updated` and `domain.deleted`: the created payload plus the verification state. */
export function updatedEventObject(row: DomainRow, targets: RecordTargets) {
  return {
    ...createdEventObject(row, targets),
    verification_status: row.verification_status,
    verified_at: row.verified_at,
    dns_checked_at: row.dns_checked_at,
    manual_review_required: row.manual_review_required === 1,
    manually_verified_at: row.manually_verified_at,
    dmarc_reports: row.dmarc_reports === 1,
    updated_at: row.updated_at,
  };
}
