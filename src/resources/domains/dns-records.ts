// The DNS records a domain publishes (https://emailit.com/docs/domains.md): what to show the user
// and what the checks compare against. `<selector>` is the domain's fixed DKIM selector label.
import type { Config } from '../../config.ts';
import { dkimRecordValue } from './dkim.ts';
import type { DomainsTable, RecordStatus } from './tables.ts';

export type RecordKey = 'return_path' | 'spf' | 'dkim' | 'dmarc' | 'tracking' | 'inbound';
export const RECORD_KEYS: readonly RecordKey[] = ['return_path', 'spf', 'dkim', 'dmarc', 'tracking', 'inbound'];
export const REQUIRED_RECORDS: readonly RecordKey[] = ['spf', 'dkim', 'return_path'];

export const DEFAULT_TRACKING_KEY = 'go';
export const DEFAULT_INBOUND_KEY = 'inbound';

export type RecordTargets = Pick<Config, 'returnPathHost' | 'spfIncludeHost' | 'trackingCnameTarget' | 'inboundMxHost'>;

export type DomainRecordSource = Pick<
  DomainsTable,
  'name' | 'dkim_selector' | 'dkim_public_key' | 'dmarc_reports' | 'dmarc_address' | 'tracking_key' | 'inbound_key'
>;

export interface ExpectedRecord {
  key: RecordKey;
  type: 'MX' | 'TXT' | 'CNAME';
  name: string;
  value: string;
  priority: number | null;
  required: boolean;
}

export const returnPathDomain = (d: Pick<DomainsTable, 'name' | 'dkim_selector'>) => `${d.dkim_selector}.${d.name}`;
export const dkimRecordName = (d: Pick<DomainsTable, 'name' | 'dkim_selector'>) => `${d.dkim_selector}._domainkey.${d.name}`;
export const dmarcRecordName = (d: Pick<DomainsTable, 'name'>) => `_dmarc.${d.name}`;
export const trackingHost = (d: Pick<DomainsTable, 'name' | 'tracking_key'>) => `${d.tracking_key ?? DEFAULT_TRACKING_KEY}.${d.name}`;
export const inboundHost = (d: Pick<DomainsTable, 'name' | 'inbound_key'>) => `${d.inbound_key ?? DEFAULT_INBOUND_KEY}.${d.name}`;

export function spfRecordValue(spfIncludeHost: string): string {
  return `v=spf1 include:${spfIncludeHost} ~all`;
}

export function dmarcRecordValue(d: Pick<DomainsTable, 'dmarc_reports' | 'dmarc_address'>): string {
  return d.dmarc_reports ? `v=DMARC1; p=none; rua=mailto:${d.dmarc_address}; ruf=mailto:${d.dmarc_address};` : 'v=DMARC1; p=none;';
}

/** The six records in the spec's order: return path, SPF, DKIM (required), DMARC, tracking, inbound. */
export function expectedRecords(d: DomainRecordSource, targets: RecordTargets): ExpectedRecord[] {
  return [
    { key: 'return_path', type: 'MX', name: returnPathDomain(d), value: targets.returnPathHost, priority: 10, required: true },
    { key: 'spf', type: 'TXT', name: returnPathDomain(d), value: spfRecordValue(targets.spfIncludeHost), priority: null, required: true },
    { key: 'dkim', type: 'TXT', name: dkimRecordName(d), value: dkimRecordValue(d.dkim_public_key), priority: null, required: true },
    { key: 'dmarc', type: 'TXT', name: dmarcRecordName(d), value: dmarcRecordValue(d), priority: null, required: false },
    { key: 'tracking', type: 'CNAME', name: trackingHost(d), value: targets.trackingCnameTarget, priority: null, required: false },
    { key: 'inbound', type: 'MX', name: inboundHost(d), value: targets.inboundMxHost, priority: 10, required: false },
  ];
}

type StatusColumns = { [K in RecordKey as `${K}_status`]: RecordStatus } & { [K in RecordKey as `${K}_error`]: string | null };

/** `dns_records` of the domain object: each expected record with the last check's outcome. */
export function dnsRecordsOf(row: DomainRecordSource & StatusColumns, targets: RecordTargets) {
  return expectedRecords(row, targets).map((record) => ({
    type: record.type,
    name: record.name,
    value: record.value,
    priority: record.priority,
    ttl: 'auto' as const,
    required: record.required,
    status: row[`${record.key}_status`],
    error: row[`${record.key}_error`],
  }));
}
