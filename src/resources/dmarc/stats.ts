// Breakdowns of a domain's aggregate reports: by sending source IP, by reporting organization, by
// the receivers' verdicts (SPF and DKIM after alignment, and so DMARC), and by the sources'
// country and network (looked up offline, src/platform/ip-location.ts), each with pass rates.
// They add up the records of processed reports (duplicates and failures have none), filtered by the
// report period (`from`, `to`) and reporter (`org_name`), and page with `limit` (default 50, at
// most 200) and `offset` (https://emailit.com/docs/api-reference/pagination/).
import { sql, type AliasedExpression, type Expression, type ExpressionBuilder, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { Query } from '../../platform/http/lists.ts';
import type { Database } from '../../platform/db/schema.ts';
import { countryOf, networkOf } from '../../platform/ip-location.ts';
import { reportDomain } from './access.ts';
import { ratio } from './objects.ts';
import { periodBounds, periodCondition } from './period.ts';
import { one, paging } from './service.ts';

export const BREAKDOWN_DEFAULT_LIMIT = 50;
export const BREAKDOWN_MAX_LIMIT = 200;

type Records = SelectQueryBuilder<Database, 'dmarc_records', {}>;

const messagesWhere = (condition: Expression<any>) => sql<string>`sum(case when ${condition} then message_count else 0 end)`;

/** The sums every breakdown row carries. */
function tally(eb: ExpressionBuilder<Database, 'dmarc_records'>) {
  return [
    sql<string>`sum(message_count)`.as('messages'),
    messagesWhere(eb('dmarc', '=', 'pass')).as('dmarc_pass'),
    messagesWhere(eb('spf', '=', 'pass')).as('spf_pass'),
    messagesWhere(eb('dkim', '=', 'pass')).as('dkim_pass'),
    messagesWhere(eb('disposition', '=', 'none')).as('disposition_none'),
    messagesWhere(eb('disposition', '=', 'quarantine')).as('disposition_quarantine'),
    messagesWhere(eb('disposition', '=', 'reject')).as('disposition_reject'),
  ] as const;
}

interface Tally {
  messages: string | number | null;
  dmarc_pass: string | number | null;
  spf_pass: string | number | null;
  dkim_pass: string | number | null;
  disposition_none: string | number | null;
  disposition_quarantine: string | number | null;
  disposition_reject: string | number | null;
}

/** The pass counts and rates of a row (sums arrive as text from PostgreSQL's numeric). */
export function passRates(row: Tally) {
  const messages = Number(row.messages ?? 0);
  const pass = (value: string | number | null) => Number(value ?? 0);
  const verdict = (passed: number) => ({ pass: passed, fail: messages - passed, pass_rate: ratio(passed, messages) });
  return {
    message_count: messages,
    dmarc: verdict(pass(row.dmarc_pass)),
    spf: verdict(pass(row.spf_pass)),
    dkim: verdict(pass(row.dkim_pass)),
    dispositions: { none: pass(row.disposition_none), quarantine: pass(row.disposition_quarantine), reject: pass(row.disposition_reject) },
  };
}

async function recordsOf(db: Db, workspaceId: string, idOrName: string, query: Query): Promise<Records> {
  const domain = await reportDomain(db, workspaceId, idOrName);
  const bounds = periodBounds({ from: one(query.from), to: one(query.to) });
  const orgName = one(query.org_name);
  let qb: Records = db.selectFrom('dmarc_records').where('domain_id', '=', domain.id);
  if (bounds.start || bounds.end) qb = qb.where((eb) => periodCondition(eb, 'period_start', bounds));
  if (orgName) qb = qb.where('org_name', '=', orgName);
  return qb;
}

/** The records grouped by `key`, with the tally and `extra` sums, most messages first. */
async function groupedBy(
  db: Db,
  workspaceId: string,
  idOrName: string,
  query: Query,
  key: 'source_ip' | 'org_name',
  extra: (eb: ExpressionBuilder<Database, 'dmarc_records'>) => AliasedExpression<any, string>[],
) {
  const { limit, offset } = paging(query, BREAKDOWN_DEFAULT_LIMIT);
  const rows = await (await recordsOf(db, workspaceId, idOrName, query))
    .select((eb) => [key, ...tally(eb), ...extra(eb)])
    .groupBy(key)
    .orderBy(sql`sum(message_count)`, 'desc')
    .orderBy(key)
    .limit(limit)
    .offset(offset)
    .execute();
  return { rows: rows as unknown as Array<Tally & Record<string, unknown>>, meta: { limit, offset } };
}

/** GET /domains/{id}/dmarc/stats/sources: one row per sending IP. */
export async function sourceBreakdown(db: Db, workspaceId: string, idOrName: string, query: Query) {
  const { rows, meta } = await groupedBy(db, workspaceId, idOrName, query, 'source_ip', (eb) => [
    eb.fn.count<string>('org_name').distinct().as('reporters'),
    eb.fn.min('period_start').as('first_seen'),
    eb.fn.max('period_start').as('last_seen'),
  ]);
  const data = rows.map((row) => ({
    source_ip: row.source_ip as string,
    ...passRates(row),
    reporter_count: Number(row.reporters),
    first_seen: row.first_seen as string,
    last_seen: row.last_seen as string,
  }));
  return { data, meta };
}

/** GET /domains/{id}/dmarc/stats/reporters: one row per reporting organization. */
export async function reporterBreakdown(db: Db, workspaceId: string, idOrName: string, query: Query) {
  const { rows, meta } = await groupedBy(db, workspaceId, idOrName, query, 'org_name', (eb) => [
    eb.fn.count<string>('report_id').distinct().as('reports'),
    eb.fn.count<string>('source_ip').distinct().as('sources'),
    eb.fn.max('period_start').as('last_seen'),
  ]);
  const data = rows.map((row) => ({
    org_name: row.org_name as string,
    ...passRates(row),
    report_count: Number(row.reports),
    source_count: Number(row.sources),
    last_seen: row.last_seen as string,
  }));
  return { data, meta };
}

/** GET /domains/{id}/dmarc/stats/results: messages by SPF and DKIM verdict (after alignment)
 *  and disposition, with the overall pass rates in `summary`. */
export async function resultBreakdown(db: Db, workspaceId: string, idOrName: string, query: Query) {
  const { limit, offset } = paging(query, BREAKDOWN_DEFAULT_LIMIT);
  const records = await recordsOf(db, workspaceId, idOrName, query);
  const [rows, totals] = await Promise.all([
    records
      .select(['spf', 'dkim', 'dmarc', 'disposition', sql<string>`sum(message_count)`.as('messages')])
      .groupBy(['spf', 'dkim', 'dmarc', 'disposition'])
      .orderBy(sql`sum(message_count)`, 'desc')
      .orderBy('spf', 'desc')
      .orderBy('dkim', 'desc')
      .orderBy('disposition')
      .limit(limit)
      .offset(offset)
      .execute(),
    records.select((eb) => [...tally(eb)]).executeTakeFirstOrThrow(),
  ]);
  const summary = passRates(totals);
  return {
    data: rows.map((row) => {
      const messages = Number(row.messages);
      return {
        spf: row.spf,
        dkim: row.dkim,
        dmarc: row.dmarc,
        disposition: row.disposition,
        message_count: messages,
        share: ratio(messages, summary.message_count),
      };
    }),
    summary,
    meta: { limit, offset },
  };
}

const TALLY_KEYS = [
  'messages',
  'dmarc_pass',
  'spf_pass',
  'dkim_pass',
  'disposition_none',
  'disposition_quarantine',
  'disposition_reject',
] as const;

/**
 * The records summed per source IP in SQL, then per `keyOf(ip)` here (the IP-to-place data is
 * no table), most messages first, then by key; paged like the others. Keyed on the looked-up
 * data of the running version, so a package update re-places old reports too.
 */
async function groupedByPlace<K>(
  db: Db,
  workspaceId: string,
  idOrName: string,
  query: Query,
  keyOf: (ip: string) => { id: string; key: K },
) {
  const { limit, offset } = paging(query, BREAKDOWN_DEFAULT_LIMIT);
  const perSource = await (await recordsOf(db, workspaceId, idOrName, query))
    .select((eb) => ['source_ip', ...tally(eb)])
    .groupBy('source_ip')
    .execute();
  const groups = new Map<string, { key: K; sums: Record<(typeof TALLY_KEYS)[number], number>; sources: number }>();
  for (const row of perSource as unknown as Array<Tally & { source_ip: string }>) {
    const { id, key } = keyOf(row.source_ip);
    let group = groups.get(id);
    if (!group) {
      group = {
        key,
        sums: {
          messages: 0,
          dmarc_pass: 0,
          spf_pass: 0,
          dkim_pass: 0,
          disposition_none: 0,
          disposition_quarantine: 0,
          disposition_reject: 0,
        },
        sources: 0,
      };
      groups.set(id, group);
    }
    for (const name of TALLY_KEYS) group.sums[name] += Number(row[name] ?? 0);
    group.sources += 1;
  }
  const rows = [...groups.entries()]
    .sort(([a, x], [b, y]) => y.sums.messages - x.sums.messages || byKeyUnknownLast(a, b))
    .slice(offset, offset + limit)
    .map(([, group]) => ({ key: group.key, rates: passRates(group.sums), sources: group.sources }));
  return { rows, meta: { limit, offset } };
}

const byKeyUnknownLast = (a: string, b: string) => (a === b ? 0 : a === '' ? 1 : b === '' ? -1 : a < b ? -1 : 1);

/** GET /domains/{id}/dmarc/stats/countries: one row per country of the sending IPs. */
export async function countryBreakdown(db: Db, workspaceId: string, idOrName: string, query: Query) {
  const { rows, meta } = await groupedByPlace(db, workspaceId, idOrName, query, (ip) => {
    const country = countryOf(ip);
    return { id: country ?? '', key: country };
  });
  return { data: rows.map((row) => ({ country: row.key, ...row.rates, source_count: row.sources })), meta };
}

/** GET /domains/{id}/dmarc/stats/networks: one row per autonomous system of the sending IPs. */
export async function networkBreakdown(db: Db, workspaceId: string, idOrName: string, query: Query) {
  const { rows, meta } = await groupedByPlace(db, workspaceId, idOrName, query, (ip) => {
    const network = networkOf(ip);
    return { id: network ? String(network.asn).padStart(10, '0') : '', key: network };
  });
  return {
    data: rows.map((row) => ({
      asn: row.key?.asn ?? null,
      organization: row.key?.organization ?? null,
      ...row.rates,
      source_count: row.sources,
    })),
    meta,
  };
}
