// Sending domains: https://emailit.com/docs/domains.md,
// https://emailit.com/docs/domains/verification.md. Routes call these; they own the rules (names,
// plan gates and limits, tracking), the transactions and the events. The DNS check itself lives in
// verification.ts.
//
// For the sending and delivery code (read-only helpers, see the bottom of this file):
//   findSendingDomain(db, secrets, workspaceId, domainName) → SendingDomain | null
//     the workspace's domain whose name is exactly the `from` domain (a subdomain is its own
//     domain), with `verified` (send only when true, else 422 `Domain not verified`),
//     `trackingVerified` (tracking forced off when false), the DKIM selector and the opened
//     private key for signing, and the return-path domain for the envelope sender.
//   findSendingDomainById(db, secrets, workspaceId, domainId) → the same, by id (API keys
//     restricted with `sending_domain_id`).
//   findDomainByHost(db, host) → which domain (and workspace) a host such as
//     `inbound.example.com` (inbound MX), `<selector>.example.com` (return path, bounces) or
//     `go.example.com` (tracking) belongs to.
import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import type { AppContext } from '../../platform/context.ts';
import type { Executor } from '../../platform/db/database.ts';
import { dialectOf, isUniqueViolation } from '../../platform/db/database.ts';
import { preparedQuery, type PrefetchRead } from '../../platform/db/prepared.ts';
import { emitEvent } from '../../platform/events.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { newId, randomAlphanumeric } from '../../platform/ids.ts';
import { ApiError, conflictError, plainError, planRequiredError } from '../../platform/http/errors.ts';
import { applyListQuery, countRows, pageLimitList, type ListSpec, type Query } from '../../platform/http/lists.ts';
import type { Sealer } from '../../platform/secrets.ts';
import { getWorkspace, PLAN_NAMES, type Plan, type Workspace } from '../workspaces/service.ts';
import { generateDkimKey } from './dkim.ts';
import {
  DEFAULT_INBOUND_KEY,
  DEFAULT_TRACKING_KEY,
  expectedRecords,
  inboundHost,
  returnPathDomain,
  trackingHost,
  type ExpectedRecord,
} from './dns-records.ts';
import { checkRecords, type CheckResults } from './checks.ts';
import { checkApexName, checkLabel, normalizeHost } from './names.ts';
import { createdEventObject, domainObject, updatedEventObject, verifiedDomainObject, type DomainRow } from './objects.ts';
import type { DomainsTable } from './tables.ts';
import { CHECK_INTERVAL_MS, checkDomain, domainResolver, type DomainDeps } from './verification.ts';

// What email verification uses: a domain's registration (RDAP).
export { lookupRegistration } from './rdap.ts';

/** Domains per plan (https://emailit.com/docs/limits.md); null is unlimited. Pay as you go
 *  rises to PAYG_PURCHASED_DOMAIN_LIMIT after the workspace's first credit purchase. */
export const DOMAIN_LIMITS: Record<Plan, number | null> = { payg: 3, pro: 100, business: 1000, custom: null };
export const PAYG_PURCHASED_DOMAIN_LIMIT = 25;

/** The workspace's domain limit: its plan's, or 25 on Pay as you go once it has bought credits. */
export function domainLimit(workspace: Pick<Workspace, 'plan' | 'firstCreditPurchaseAt'>): number | null {
  if (workspace.plan === 'payg' && workspace.firstCreditPurchaseAt !== null) return PAYG_PURCHASED_DOMAIN_LIMIT;
  return DOMAIN_LIMITS[workspace.plan];
}

export const NOT_FOUND = 'Domain not found';
export const TRACKING_NOT_VERIFIED = 'Tracking can only be turned on once the tracking CNAME record is verified';

type Flag = boolean | 0 | 1;
const on = (flag: Flag | undefined) => flag === true || flag === 1;

export interface CreateDomainInput {
  name: string;
  tracking_key?: string | null;
  inbound_key?: string | null;
  dmarc_reports?: boolean;
  track_loads?: Flag;
  track_clicks?: Flag;
}

export interface UpdateDomainInput {
  tracking_key?: string | null;
  inbound_key?: string | null;
  dmarc_reports?: boolean;
  track_loads?: Flag;
  track_clicks?: Flag;
}

function label(field: 'tracking_key' | 'inbound_key', value: string | null | undefined): string | null {
  const checked = checkLabel(field, value);
  if (!checked.ok) throw plainError(400, checked.error);
  return checked.label;
}

/** The tracking CNAME, the inbound MX and the return path need three different names. */
function checkLabelsApart(selector: string, trackingKey: string | null, inboundKey: string | null): void {
  const tracking = trackingKey ?? DEFAULT_TRACKING_KEY;
  const inbound = inboundKey ?? DEFAULT_INBOUND_KEY;
  if (tracking === selector)
    throw plainError(400, `tracking_key must differ from the DKIM selector label "${selector}" used by the return path`);
  if (inbound === selector)
    throw plainError(400, `inbound_key must differ from the DKIM selector label "${selector}" used by the return path`);
  if (tracking === inbound)
    throw plainError(400, 'tracking_key and inbound_key must differ (a CNAME and an MX record cannot share a name)');
}

async function requireWorkspace(db: Executor, workspaceId: string): Promise<Workspace> {
  const workspace = await getWorkspace(db, workspaceId);
  if (!workspace) throw plainError(404, 'Workspace not found');
  return workspace;
}

/** Serializes domain creation per workspace on PostgreSQL, so the plan limit holds under races
 *  (SQLite runs one write transaction at a time). */
async function lockWorkspace(tx: Executor, workspaceId: string): Promise<void> {
  if (dialectOf(tx) === 'postgres') await tx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forUpdate().execute();
}

async function findByName(db: Executor, workspaceId: string, name: string) {
  return db
    .selectFrom('domains')
    .select(['id', 'name'])
    .where('workspace_id', '=', workspaceId)
    .where('name', '=', name)
    .executeTakeFirst();
}

const duplicate = (existing: { id: string; name: string }) =>
  conflictError('Domain already exists', { object: 'domain', id: existing.id, name: existing.name });

export async function createDomain(ctx: AppContext, workspaceId: string, input: CreateDomainInput) {
  const checked = checkApexName(input.name);
  if (!checked.ok) throw plainError(400, checked.error);
  const name = checked.name;
  const selector = ctx.config.dkimSelector;
  const trackingKey = label('tracking_key', input.tracking_key);
  const inboundKey = label('inbound_key', input.inbound_key);
  checkLabelsApart(selector, trackingKey, inboundKey);
  const workspace = await requireWorkspace(ctx.db, workspaceId);
  if (input.dmarc_reports && workspace.plan === 'payg') throw planRequiredError('pro');
  if (on(input.track_loads) || on(input.track_clicks)) throw plainError(422, TRACKING_NOT_VERIFIED);
  const early = await findByName(ctx.db, workspaceId, name);
  if (early) throw duplicate(early);

  const key = await generateDkimKey();
  try {
    return await ctx.db.transaction().execute(async (tx) => {
      await lockWorkspace(tx, workspaceId);
      const existing = await findByName(tx, workspaceId, name);
      if (existing) throw duplicate(existing);
      const current = await requireWorkspace(tx, workspaceId);
      const limit = domainLimit(current);
      if (limit !== null && (await countDomains(tx, workspaceId)) >= limit) {
        throw plainError(422, `Domain limit reached: the ${PLAN_NAMES[current.plan]} plan allows ${limit} domain${limit === 1 ? '' : 's'}`);
      }
      const now = nowIso();
      const row: DomainRow = {
        id: newId('dom'),
        workspace_id: workspaceId,
        name,
        // Pay as you go domains wait in review until their first DNS check decides.
        verification_status: current.plan === 'payg' ? 'pending_review' : 'pending',
        verified_at: null,
        manual_review_required: 0,
        manually_verified_at: null,
        dns_checked_at: null,
        next_check_at: Math.floor(nowMs() + CHECK_INTERVAL_MS),
        registered_at: null,
        spf_status: 'pending',
        spf_error: null,
        dkim_status: 'pending',
        dkim_error: null,
        return_path_status: 'pending',
        return_path_error: null,
        dmarc_status: 'pending',
        dmarc_error: null,
        tracking_status: 'pending',
        tracking_error: null,
        inbound_status: 'pending',
        inbound_error: null,
        tracking_key: trackingKey,
        inbound_key: inboundKey,
        track_loads: 0,
        track_clicks: 0,
        dmarc_reports: input.dmarc_reports ? 1 : 0,
        dmarc_address: `dmarc-${randomBytes(8).toString('hex')}@${ctx.config.mailHostname}`,
        verification_token: randomAlphanumeric(32),
        dkim_selector: selector,
        dkim_public_key: key.publicKeyBase64,
        dkim_private_key: ctx.secrets.seal(key.privateKeyPem),
        created_at: now,
        updated_at: now,
      };
      await tx.insertInto('domains').values(row).execute();
      await emitEvent(tx, workspaceId, 'domain.created', createdEventObject(row, ctx.config));
      return domainObject(row, ctx.config);
    });
  } catch (error) {
    // Another process inserted the same name between our check and insert (the transaction
    // is over, so the winner can be read).
    const winner = isUniqueViolation(error) ? await findByName(ctx.db, workspaceId, name) : undefined;
    throw winner ? duplicate(winner) : error;
  }
}

async function countDomains(db: Executor, workspaceId: string): Promise<number> {
  return countRows(db.selectFrom('domains').select('id').where('workspace_id', '=', workspaceId));
}

/** A path identifier as the lookup key: `dom_`/`sd_`/`sed_` ids as they are, names in ASCII lowercase. */
function pathKey(idOrName: string): { by: 'id' | 'name'; value: string } {
  const value = idOrName.trim();
  if (/^(dom|sd|sed)_/.test(value)) return { by: 'id', value };
  return { by: 'name', value: domainToASCII(normalizeHost(value)) || normalizeHost(value) };
}

/** The workspace's domain by id or name (404 `Domain not found` otherwise); other resources
 *  with paths under /domains/{id} find their domain with it. */
export async function findDomain(db: Executor, workspaceId: string, idOrName: string, lock = false): Promise<DomainRow> {
  const key = pathKey(idOrName);
  let query = db.selectFrom('domains').selectAll().where('workspace_id', '=', workspaceId).where(key.by, '=', key.value);
  if (lock && dialectOf(db) === 'postgres') query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw plainError(404, NOT_FOUND);
  return row;
}

export async function getDomain(ctx: AppContext, workspaceId: string, idOrName: string) {
  return domainObject(await findDomain(ctx.db, workspaceId, idOrName), ctx.config);
}

const STATUS_VALUES = ['pending', 'ok', 'missing', 'invalid', 'error'] as const;
const listSpec: ListSpec = {
  fields: {
    name: { type: 'string' },
    verification_status: { type: 'enum', values: ['verified', 'pending', 'pending_review'] },
    spf_status: { type: 'enum', values: STATUS_VALUES },
    dkim_status: { type: 'enum', values: STATUS_VALUES },
    return_path_status: { type: 'enum', values: STATUS_VALUES },
    mx_status: { type: 'enum', values: STATUS_VALUES, column: 'return_path_status' },
    dmarc_status: { type: 'enum', values: STATUS_VALUES },
    tracking_status: { type: 'enum', values: STATUS_VALUES },
    inbound_status: { type: 'enum', values: STATUS_VALUES },
    manual_review_required: { type: 'boolean' },
    track_loads: { type: 'boolean' },
    track_clicks: { type: 'boolean' },
    dmarc_reports: { type: 'boolean' },
    created_at: { type: 'date' },
    updated_at: { type: 'date' },
    verified_at: { type: 'date' },
    dns_checked_at: { type: 'date' },
    manually_verified_at: { type: 'date' },
  },
  searchColumns: ['name'],
  sortConvention: 'order-direction',
};

export async function listDomains(ctx: AppContext, workspaceId: string, query: Query, requestUrl: string) {
  const workspace = await requireWorkspace(ctx.db, workspaceId);
  const base = ctx.db.selectFrom('domains').selectAll().where('workspace_id', '=', workspaceId);
  const [page, count] = await Promise.all([
    pageLimitList(applyListQuery(base, query, listSpec), query, requestUrl, 10, (row) => domainObject(row, ctx.config)),
    countDomains(ctx.db, workspaceId),
  ]);
  return { ...page, domain_limit: domainLimit(workspace), domain_count: count, plan_name: PLAN_NAMES[workspace.plan] };
}

export async function updateDomain(ctx: AppContext, workspaceId: string, idOrName: string, input: UpdateDomainInput) {
  const newTrackingKey = input.tracking_key === undefined ? undefined : label('tracking_key', input.tracking_key);
  const newInboundKey = input.inbound_key === undefined ? undefined : label('inbound_key', input.inbound_key);
  return ctx.db.transaction().execute(async (tx) => {
    const row = await findDomain(tx, workspaceId, idOrName, true);
    const changes: Partial<DomainsTable> = {};
    const trackingKey = newTrackingKey === undefined ? row.tracking_key : newTrackingKey;
    const inboundKey = newInboundKey === undefined ? row.inbound_key : newInboundKey;
    checkLabelsApart(row.dkim_selector, trackingKey, inboundKey);
    if (trackingKey !== row.tracking_key) changes.tracking_key = trackingKey;
    if (inboundKey !== row.inbound_key) changes.inbound_key = inboundKey;
    // A record that moves to another name must be checked again.
    const trackingMoved = (trackingKey ?? DEFAULT_TRACKING_KEY) !== (row.tracking_key ?? DEFAULT_TRACKING_KEY);
    if (trackingMoved) Object.assign(changes, { tracking_status: 'pending', tracking_error: null });
    if ((inboundKey ?? DEFAULT_INBOUND_KEY) !== (row.inbound_key ?? DEFAULT_INBOUND_KEY)) {
      Object.assign(changes, { inbound_status: 'pending', inbound_error: null });
    }
    if (input.dmarc_reports !== undefined && (input.dmarc_reports ? 1 : 0) !== row.dmarc_reports) {
      if (input.dmarc_reports && (await requireWorkspace(tx, workspaceId)).plan === 'payg') throw planRequiredError('pro');
      // The published DMARC value changes (report addresses), so its status starts over.
      Object.assign(changes, { dmarc_reports: input.dmarc_reports ? 1 : 0, dmarc_status: 'pending', dmarc_error: null });
    }
    const loads = input.track_loads === undefined ? row.track_loads : on(input.track_loads) ? 1 : 0;
    const clicks = input.track_clicks === undefined ? row.track_clicks : on(input.track_clicks) ? 1 : 0;
    const turningOn = (loads === 1 && row.track_loads === 0) || (clicks === 1 && row.track_clicks === 0);
    const trackingStatus = changes.tracking_status ?? row.tracking_status;
    if ((turningOn || (trackingMoved && (loads || clicks))) && trackingStatus !== 'ok') throw plainError(422, TRACKING_NOT_VERIFIED);
    if (loads !== row.track_loads) changes.track_loads = loads;
    if (clicks !== row.track_clicks) changes.track_clicks = clicks;
    if (Object.keys(changes).length === 0) return domainObject(row, ctx.config);
    const next: DomainRow = { ...row, ...changes, updated_at: nowIso() };
    await tx
      .updateTable('domains')
      .set({ ...changes, updated_at: next.updated_at })
      .where('id', '=', row.id)
      .execute();
    await emitEvent(tx, workspaceId, 'domain.updated', updatedEventObject(next, ctx.config));
    return domainObject(next, ctx.config);
  });
}

/** Deletes the domain and its DKIM key for good. API keys restricted to it keep the dangling
 *  id, so they can never send from another domain by accident. */
export async function deleteDomain(ctx: AppContext, workspaceId: string, idOrName: string) {
  return ctx.db.transaction().execute(async (tx) => {
    const row = await findDomain(tx, workspaceId, idOrName, true);
    await tx.deleteFrom('domains').where('id', '=', row.id).execute();
    await emitEvent(tx, workspaceId, 'domain.deleted', { ...updatedEventObject(row, ctx.config), deleted: true });
    return { object: 'domain' as const, id: row.id, name: row.name, deleted: true };
  });
}

/** POST /domains/{id}/verify: checks the records now and returns the saved outcome. */
export async function verifyDomain(ctx: AppContext, workspaceId: string, idOrName: string) {
  const row = await findDomain(ctx.db, workspaceId, idOrName);
  const checked = await checkDomain(ctx, row.id);
  if (!checked) throw plainError(404, NOT_FOUND);
  return verifiedDomainObject(checked, ctx.config);
}

export class DomainError extends Error {}

/** `postlane domain approve`: the operator's manual review approval, then a DNS check. */
export async function approveDomain(deps: DomainDeps, workspaceId: string, idOrName: string): Promise<DomainRow> {
  if (!(await getWorkspace(deps.db, workspaceId))) throw new DomainError(`no workspace with id ${workspaceId}`);
  const approved = await deps.db.transaction().execute(async (tx) => {
    const row = await findDomain(tx, workspaceId, idOrName, true).catch((error) => {
      throw error instanceof ApiError && error.status === 404
        ? new DomainError(`no domain "${idOrName}" in workspace ${workspaceId}`)
        : error;
    });
    const now = nowIso();
    await tx
      .updateTable('domains')
      .set({ manually_verified_at: now, manual_review_required: 0, updated_at: now })
      .where('id', '=', row.id)
      .execute();
    return row;
  });
  const checked = await checkDomain(deps, approved.id);
  if (!checked) throw new DomainError(`domain "${idOrName}" was deleted meanwhile`);
  return checked;
}

// ---- For sending, delivery, inbound mail and tracking ------------------------------------

export interface SendingDomain {
  id: string;
  workspaceId: string;
  name: string;
  verificationStatus: DomainRow['verification_status'];
  /** Mail may be sent from the domain (SPF, DKIM and return path verified, no review pending). */
  verified: boolean;
  dkimSelector: string;
  /** PKCS#8 PEM of the domain's 2048-bit RSA key: sign with it, never log or store it. */
  dkimPrivateKeyPem: string;
  /** `<selector>.<domain>`: the envelope sender's domain; its MX receives bounces. */
  returnPathDomain: string;
  returnPathVerified: boolean;
  /** `<tracking_key>.<domain>`: host of tracked links and the open pixel. */
  trackingHost: string;
  /** Tracking may be used only when the tracking CNAME is verified. */
  trackingVerified: boolean;
  /** The domain's default tracking for emails that do not choose. */
  trackLoads: boolean;
  trackClicks: boolean;
  /** `<inbound_key>.<domain>`: where inbound mail for the workspace arrives. */
  inboundHost: string;
  inboundVerified: boolean;
}

// A class, so that the key's getter is one function on the prototype. As an object literal's
// getter it was a new closure per object, and so a new hidden class per object: those live in
// the old generation until a full collection, and each kept its closure's row (and through it
// the rest of the request) alive and promoted. On the send path that was most of what a send
// still promoted, and a full collection (a 20-40 ms stall) every few seconds at 500 req/s.
// The getter is not an own property: a copy takes the key with it through withOpenedKey.
class LoadedSendingDomain implements SendingDomain {
  readonly id: string;
  readonly workspaceId: string;
  readonly name: string;
  readonly verificationStatus: DomainRow['verification_status'];
  readonly verified: boolean;
  readonly dkimSelector: string;
  readonly returnPathDomain: string;
  readonly returnPathVerified: boolean;
  readonly trackingHost: string;
  readonly trackingVerified: boolean;
  readonly trackLoads: boolean;
  readonly trackClicks: boolean;
  readonly inboundHost: string;
  readonly inboundVerified: boolean;
  readonly #sealedKey: string;
  readonly #secrets: Sealer;
  constructor(row: SendingDomainRow, secrets: Sealer) {
    this.id = row.id;
    this.workspaceId = row.workspace_id;
    this.name = row.name;
    this.verificationStatus = row.verification_status;
    this.verified = row.verification_status === 'verified';
    this.dkimSelector = row.dkim_selector;
    this.returnPathDomain = returnPathDomain(row);
    this.returnPathVerified = row.return_path_status === 'ok';
    this.trackingHost = trackingHost(row);
    this.trackingVerified = row.tracking_status === 'ok';
    this.trackLoads = row.track_loads === 1;
    this.trackClicks = row.track_clicks === 1;
    this.inboundHost = inboundHost(row);
    this.inboundVerified = row.inbound_status === 'ok';
    this.#sealedKey = row.dkim_private_key;
    this.#secrets = secrets;
  }
  // Opened on first use: accepting a send needs the domain, only delivery needs its key.
  get dkimPrivateKeyPem(): string {
    return this.#secrets.open(this.#sealedKey);
  }
}

// What sending reads of a domain, not all of its 34 columns: the domain is read for every send.
const SENDING_COLUMNS = [
  'id',
  'workspace_id',
  'name',
  'verification_status',
  'dkim_selector',
  'dkim_private_key',
  'return_path_status',
  'tracking_key',
  'tracking_status',
  'track_loads',
  'track_clicks',
  'inbound_key',
  'inbound_status',
] as const;
type SendingDomainRow = Pick<DomainRow, (typeof SENDING_COLUMNS)[number]>;

function sendingDomain(row: SendingDomainRow, secrets: Sealer): SendingDomain {
  return new LoadedSendingDomain(row, secrets);
}

/** A plain copy of `domain` with its key opened: for another thread (a structured clone copies
 *  own data properties only). */
export function withOpenedKey(domain: SendingDomain): SendingDomain {
  return { ...domain, dkimPrivateKeyPem: domain.dkimPrivateKeyPem };
}

/** The workspace's domain named exactly `domainName` (the part after @ of a from address). */
const domainByName = preparedQuery((db, p: { workspaceId: string; name: string }) =>
  db.selectFrom('domains').select(SENDING_COLUMNS).where('workspace_id', '=', p.workspaceId).where('name', '=', p.name),
);

const domainByNameParams = (workspaceId: string, domainName: string) => ({
  workspaceId,
  name: domainToASCII(normalizeHost(domainName)) || normalizeHost(domainName),
});

/** findSendingDomain's read, to fetch ahead with others (prepared.ts `prefetch`). */
export const sendingDomainRead = (workspaceId: string, domainName: string): PrefetchRead => ({
  query: domainByName,
  params: domainByNameParams(workspaceId, domainName),
});

export async function findSendingDomain(
  db: Executor,
  secrets: Sealer,
  workspaceId: string,
  domainName: string,
): Promise<SendingDomain | null> {
  const [row] = await domainByName(db, domainByNameParams(workspaceId, domainName));
  return row ? sendingDomain(row, secrets) : null;
}

export async function findSendingDomainById(
  db: Executor,
  secrets: Sealer,
  workspaceId: string,
  domainId: string,
): Promise<SendingDomain | null> {
  const row = await db
    .selectFrom('domains')
    .select(SENDING_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', domainId)
    .executeTakeFirst();
  return row ? sendingDomain(row, secrets) : null;
}

export interface DomainHost {
  domainId: string;
  workspaceId: string;
  name: string;
  role: 'apex' | 'return_path' | 'inbound' | 'tracking';
  verified: boolean;
}

/** Which domain a host belongs to. Several workspaces may hold one name; only one can verify it
 *  (one DKIM record per selector), so verified domains win, then the most recently checked. */
export async function findDomainByHost(db: Executor, host: string): Promise<DomainHost | null> {
  const h = normalizeHost(host);
  const dot = h.indexOf('.');
  const first = dot > 0 ? h.slice(0, dot) : '';
  const parent = dot > 0 ? h.slice(dot + 1) : h;
  const rows = await db
    .selectFrom('domains')
    .selectAll()
    .where('name', 'in', [...new Set([h, parent])])
    .execute();
  const matches: DomainHost[] = [];
  for (const row of rows) {
    let role: DomainHost['role'] | null = null;
    if (row.name === h) role = 'apex';
    else if (first === row.dkim_selector) role = 'return_path';
    else if (first === (row.inbound_key ?? DEFAULT_INBOUND_KEY)) role = 'inbound';
    else if (first === (row.tracking_key ?? DEFAULT_TRACKING_KEY)) role = 'tracking';
    if (role)
      matches.push({
        domainId: row.id,
        workspaceId: row.workspace_id,
        name: row.name,
        role,
        verified: row.verification_status === 'verified',
      });
  }
  const checkedAt = new Map(rows.map((row) => [row.id, row.dns_checked_at ?? '']));
  matches.sort((a, b) => Number(b.verified) - Number(a.verified) || (checkedAt.get(b.domainId)! > checkedAt.get(a.domainId)! ? 1 : -1));
  return matches[0] ?? null;
}

/** One domain's records checked now, for `postlane doctor` (nothing is saved). */
export interface DomainDnsReport {
  name: string;
  /** The envelope sender's domain (`<selector>.<domain>`), whose SPF receivers evaluate. */
  returnPathDomain: string;
  results: CheckResults;
  expected: ExpectedRecord[];
}

/** Every distinct domain name (of one workspace, or of all), its records checked now through DNS_SERVERS. */
export async function checkEveryDomainNow(deps: Pick<DomainDeps, 'db' | 'config'>, workspaceId?: string): Promise<DomainDnsReport[]> {
  let query = deps.db.selectFrom('domains').selectAll().orderBy('name').orderBy('created_at');
  if (workspaceId !== undefined) query = query.where('workspace_id', '=', workspaceId);
  const rows = await query.execute();
  const seen = new Set<string>();
  const unique = rows.filter((row) => !seen.has(row.name) && seen.add(row.name));
  const resolver = domainResolver(deps.config);
  return Promise.all(
    unique.map(async (row) => ({
      name: row.name,
      returnPathDomain: returnPathDomain(row),
      results: await checkRecords(resolver, row, deps.config),
      expected: expectedRecords(row, deps.config),
    })),
  );
}
