// Warm-up of new sending domains and source addresses (docs/delivery.md "Warm-up"): marking and
// unmarking, the state per destination for the API and the CLI, and the gate each delivery passes.
//
// The gate counts a message before it goes (a `reserved` row, made `sent` once accepted, deleted
// when not): today's counts survive a restart exactly, and concurrent deliveries (other
// processes too) never pass the cap, because each counts after inserting its own row. What is
// over the day's cap is deferred, not failed: its job is moved to the next UTC day, transactional
// mail to the start of the day and bulk mail later, and bulk mail waits while transactional mail
// deferred earlier is being let through.
import { rescheduleDelivery } from '../../delivery/jobs.ts';
import type { Selectable } from 'kysely';
import { isIP } from 'node:net';
import type { Db } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { fieldValidationError, messageError } from '../../platform/http/errors.ts';
import { newId } from '../../platform/ids.ts';
import {
  capOn,
  dayNumber,
  dayOf,
  DEFAULT_SCHEDULE_NAME,
  nextDayStartMs,
  parseWarmupSchedules,
  scheduleDays,
  slowedCap,
  type Schedules,
} from '../../mail/warmup.ts';
import { feedbackOf } from '../../mail/shaping.ts';
import type { BounceReason } from '../../mail/bounce-reasons.ts';
import type { DeliveryWarmupsTable } from './tables.ts';
import { findVerifiedDomainNames } from '../domains/index.ts';

export type WarmupRow = Selectable<DeliveryWarmupsTable>;
type Priority = 'transactional' | 'bulk';

/** Bulk mail deferred to the next day goes this long after the day's transactional mail. */
export const BULK_DELAY_MS = 15 * 60_000;
/** Bulk mail waiting for transactional mail let through first asks again after this. */
const BULK_WAIT_MS = 60_000;
/** Transactional mail due this recently (and still deferred) is being let through: bulk waits. */
const DRAINING_MS = 15 * 60_000;
const CACHE_MS = 2_000;

let schedulesCache: { env: string | undefined; schedules: Schedules } | null = null;

/** The schedules in force (DELIVERY_WARMUP and the built-in default). */
export function warmupSchedules(): Schedules {
  const env = process.env.DELIVERY_WARMUP;
  if (!schedulesCache || schedulesCache.env !== env) schedulesCache = { env, schedules: parseWarmupSchedules(env) };
  return schedulesCache.schedules;
}

const cache = new Map<Db, { expires: number; rows: Promise<WarmupRow[]> }>();

export function listWarmups(db: Db): Promise<WarmupRow[]> {
  return db.selectFrom('delivery_warmups').selectAll().orderBy('created_at').orderBy('id').execute();
}

function activeWarmups(db: Db): Promise<WarmupRow[]> {
  const hit = cache.get(db);
  if (hit && hit.expires > Date.now()) return hit.rows;
  const rows = listWarmups(db);
  cache.set(db, { expires: Date.now() + CACHE_MS, rows });
  rows.catch(() => cache.delete(db));
  return rows;
}

export interface StartWarmupInput {
  domain?: string | null;
  address?: string | null;
  schedule?: string | null;
}

/** The warm-up asked for, normalized and checked (400 on anything wrong). */
function warmupInput(input: StartWarmupInput) {
  const domain = input.domain?.trim().toLowerCase().replace(/\.$/, '') || null;
  const address = input.address?.trim().toLowerCase() || null;
  if (!domain === !address) throw fieldValidationError({ domain: ['Give either a domain or an address'] });
  if (domain && !/^(?=.{1,253}$)([a-z0-9_]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(domain))
    throw fieldValidationError({ domain: ['Not a domain name'] });
  if (address && !isIP(address)) throw fieldValidationError({ address: ['Not an IP address'] });
  const schedule = input.schedule?.trim() || DEFAULT_SCHEDULE_NAME;
  const schedules = warmupSchedules();
  if (!schedules[schedule])
    throw fieldValidationError({ schedule: [`No schedule named ${schedule}; configured: ${Object.keys(schedules).join(', ')}`] });
  return { domain, address, schedule };
}

/** Marks a domain or source address as warming, day 1 today (UTC). 409 when it already is. */
export async function startWarmup(db: Db, input: StartWarmupInput): Promise<WarmupRow> {
  const { domain, address, schedule } = warmupInput(input);
  const row: WarmupRow = {
    id: newId('wu'),
    kind: domain ? 'domain' : 'address',
    subject: (domain ?? address)!,
    schedule,
    started_on: dayOf(nowMs()),
    created_at: nowIso(),
  };
  try {
    await db.insertInto('delivery_warmups').values(row).execute();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw messageError(409, 'Already warming', `${row.subject} is warming up already; stop that warm-up first to start again.`);
  }
  cache.delete(db);
  return row;
}

// Through the API a workspace acts only on warm-ups of its own verified sending domains: a
// domain's warm-up caps every workspace's mail from that domain name (reputation is the
// domain's), so verification (control of its DNS) is what entitles. Source addresses are shared
// by every workspace of the MTA: their warm-ups are the operator's (`postlane delivery warmup`).

const ADDRESS_IS_OPERATORS =
  'Source-address warm-ups act on every workspace of this MTA: the operator starts, stops and lists them with `postlane delivery warmup`.';
const notFound = (what: string) =>
  messageError(404, 'Warm-up not found', `No warm-up of a verified domain of this workspace with id or domain ${what.slice(0, 253)}.`);

/** startWarmup for a workspace: its verified domains only (404 for any other), never an address (403). */
export async function startWorkspaceWarmup(db: Db, workspaceId: string, input: StartWarmupInput): Promise<WarmupRow> {
  if (input.address?.trim()) throw messageError(403, 'Operator only', ADDRESS_IS_OPERATORS);
  const { domain } = warmupInput(input);
  if ((await findVerifiedDomainNames(db, workspaceId, [domain!])).length === 0) {
    throw messageError(404, 'Domain not found', `${domain} is not a verified domain of this workspace.`);
  }
  return startWarmup(db, input);
}

/** The warm-ups of the workspace's verified domains. */
export async function workspaceWarmupStates(db: Db, workspaceId: string): Promise<WarmupObject[]> {
  const rows = (await listWarmups(db)).filter((row) => row.kind === 'domain');
  const mine = new Set(await findVerifiedDomainNames(db, workspaceId, [...new Set(rows.map((row) => row.subject))]));
  const now = nowMs();
  return Promise.all(rows.filter((row) => mine.has(row.subject)).map((row) => warmupObject(db, row, now)));
}

/** stopWarmup for a workspace: 404 unless it is the warm-up of one of its verified domains. */
export async function stopWorkspaceWarmup(db: Db, workspaceId: string, idOrSubject: string): Promise<WarmupRow> {
  const key = idOrSubject.trim().toLowerCase();
  const found = await db
    .selectFrom('delivery_warmups')
    .selectAll()
    .where('kind', '=', 'domain')
    .where((eb) => eb.or([eb('id', '=', idOrSubject.trim()), eb('subject', '=', key)]))
    .executeTakeFirst();
  if (!found || (await findVerifiedDomainNames(db, workspaceId, [found.subject])).length === 0) throw notFound(idOrSubject);
  return stopWarmup(db, found.id);
}

/** Ends a warm-up (by id, domain or address): its deferred mail is due at once. */
export async function stopWarmup(db: Db, idOrSubject: string): Promise<WarmupRow> {
  const key = idOrSubject.trim().toLowerCase();
  const row = await db.transaction().execute(async (tx) => {
    const found = await tx
      .selectFrom('delivery_warmups')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', idOrSubject.trim()), eb('subject', '=', key)]))
      .executeTakeFirst();
    if (!found) throw messageError(404, 'Warm-up not found', `No warm-up with id, domain or address ${idOrSubject.slice(0, 253)}.`);
    const deferred = await tx
      .selectFrom('delivery_warmup_sends')
      .select('email_id')
      .where('warmup_id', '=', found.id)
      .where('state', '=', 'deferred')
      .execute();
    // Deferred mail is due at once; a delivery job is keyed by its email's id (src/delivery/intake.ts).
    for (const { email_id } of deferred) {
      await rescheduleDelivery(tx, email_id, Math.floor(nowMs()));
    }
    await tx.deleteFrom('delivery_warmup_sends').where('warmup_id', '=', found.id).execute();
    await tx.deleteFrom('delivery_warmups').where('id', '=', found.id).execute();
    return found;
  });
  cache.delete(db);
  return row;
}

export interface WarmupDestinationView {
  destination: string;
  cap: number | null;
  sent: number;
  next_day_cap: number | null;
  deferred: number;
}

/** A warm-up as the API and the CLI show it: day N of M, today's cap and count per destination. */
export async function warmupObject(db: Db, row: WarmupRow, now = nowMs()) {
  const schedule = warmupSchedules()[row.schedule] ?? warmupSchedules()[DEFAULT_SCHEDULE_NAME];
  const day = dayNumber(row.started_on, now);
  const days = scheduleDays(schedule);
  const today = dayOf(now);
  const counts = await db
    .selectFrom('delivery_warmup_sends')
    .select((eb) => ['destination', 'state', eb.fn.countAll<string>().as('n')])
    .where('warmup_id', '=', row.id)
    .where((eb) => eb.or([eb('day', '=', today), eb('state', '=', 'deferred')]))
    .groupBy(['destination', 'state'])
    .execute();
  const by = new Map<string, WarmupDestinationView>();
  for (const c of counts) {
    const view = by.get(c.destination) ?? {
      destination: c.destination,
      cap: capOn(schedule, c.destination, day),
      sent: 0,
      next_day_cap: capOn(schedule, c.destination, day + 1),
      deferred: 0,
    };
    if (c.state === 'deferred') view.deferred += Number(c.n);
    else view.sent += Number(c.n);
    by.set(c.destination, view);
  }
  const destinations = [...by.values()].sort((a, b) => (a.destination < b.destination ? -1 : 1));
  return {
    object: 'delivery_warmup' as const,
    id: row.id,
    kind: row.kind,
    subject: row.subject,
    schedule: row.schedule,
    started_on: row.started_on,
    day,
    days,
    status: day > days ? ('finished' as const) : ('warming' as const),
    cap: capOn(schedule, '', day),
    next_day_cap: capOn(schedule, '', day + 1),
    deferred: destinations.reduce((n, d) => n + d.deferred, 0),
    destinations,
    created_at: row.created_at,
  };
}

export type WarmupObject = Awaited<ReturnType<typeof warmupObject>>;

export async function warmupStates(db: Db): Promise<WarmupObject[]> {
  const now = nowMs();
  return Promise.all((await listWarmups(db)).map((row) => warmupObject(db, row, now)));
}

export interface WarmupRequest {
  emailId: string;
  /** The sending domain's name. */
  domain: string;
  /** Source addresses the message may leave from (IP pools); empty: the OS chooses. */
  sources: readonly string[];
  priority: Priority;
  /** The destination (shaping key) of the recipient; null when DNS has none (not capped then). */
  destination: () => Promise<string | null>;
}

/** Over a warm-up's cap: the job runs again at `deferUntil` (unless another source address spills it). */
export interface WarmupDeferral {
  deferUntil: number;
  reason: string;
  /** The warm-up whose cap is reached, and what it warms. */
  warmupId: string;
  kind: WarmupRow['kind'];
}

/** Let through: settle it with the answer. Deferred: see WarmupDeferral. */
export type WarmupDecision = { ticket: WarmupTicket } | WarmupDeferral | null;

export interface WarmupTicket {
  warmupIds: string[];
  emailId: string;
  destination: string;
  settled?: boolean;
}

/** The gate every delivery passes (one per delivery worker). */
export class WarmupGate {
  private readonly db: Db;
  /** The destinations' answers today (this process): throttles and blocks slow the day's cap. */
  private readonly answers = new Map<string, { day: string; throttled: number; blocked: number }>();
  /** One count at a time per warm-up and destination in this process: concurrent deliveries
   *  would otherwise all see each other's rows and all defer (other processes still may, rarely). */
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(db: Db) {
    this.db = db;
  }

  async admit(request: WarmupRequest): Promise<WarmupDecision> {
    const rows = await activeWarmups(this.db);
    if (rows.length === 0) return null;
    const now = nowMs();
    const schedules = warmupSchedules();
    const sources = request.sources.map((source) => source.toLowerCase());
    const mine = rows.filter((row) =>
      row.kind === 'domain' ? row.subject === request.domain.toLowerCase() : sources.includes(row.subject),
    );
    if (mine.length === 0) return null;
    const destination = await request.destination();
    if (!destination) return null;
    const today = dayOf(now);
    const admitted: string[] = [];
    for (const row of mine) {
      const schedule = schedules[row.schedule] ?? schedules[DEFAULT_SCHEDULE_NAME];
      const cap = capOn(schedule, destination, dayNumber(row.started_on, now));
      if (cap === null) {
        // Past the schedule: warmed up. A row deferred earlier is no backlog any more.
        await this.db.deleteFrom('delivery_warmup_sends').where('warmup_id', '=', row.id).where('email_id', '=', request.emailId).execute();
        continue;
      }
      const deferral = await this.inTurn(`${row.id}|${destination}`, () =>
        this.take(row, request, destination, today, slowedCap(cap, this.answersOf(destination, today)), now),
      );
      if (deferral) {
        await this.release(admitted, request.emailId);
        return deferral;
      }
      admitted.push(row.id);
    }
    return admitted.length ? { ticket: { warmupIds: admitted, emailId: request.emailId, destination } } : null;
  }

  private inTurn<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(key) ?? Promise.resolve();
    const mine = previous.then(work, work);
    const tail = mine.catch(() => undefined);
    this.turns.set(key, tail);
    void tail.then(() => {
      if (this.turns.get(key) === tail) this.turns.delete(key);
    });
    return mine;
  }

  /** Counts the message in today's cap of `row`, or defers it (null: counted). */
  private async take(row: WarmupRow, request: WarmupRequest, destination: string, today: string, cap: number, now: number) {
    const key = { warmup_id: row.id, email_id: request.emailId };
    const deferTo = async (at: number, reason: string): Promise<WarmupDeferral> => ({
      ...(await this.defer(key, destination, today, request.priority, at, reason)),
      warmupId: row.id,
      kind: row.kind,
    });
    if (request.priority === 'bulk') {
      const draining = await this.db
        .selectFrom('delivery_warmup_sends')
        .select('email_id')
        .where('warmup_id', '=', row.id)
        .where('destination', '=', destination)
        .where('state', '=', 'deferred')
        .where('priority', '=', 'transactional')
        .where('retry_at', '<=', Math.floor(now))
        .where('retry_at', '>', Math.floor(now - DRAINING_MS))
        .limit(1)
        .executeTakeFirst();
      if (draining) return deferTo(now + BULK_WAIT_MS, `Warm-up of ${row.subject}: transactional mail to ${destination} goes first`);
    }
    await this.db
      .insertInto('delivery_warmup_sends')
      .values({ ...key, destination, day: today, priority: request.priority, state: 'reserved', retry_at: null })
      .onConflict((oc) =>
        oc
          .columns(['warmup_id', 'email_id'])
          .doUpdateSet({ destination, day: today, priority: request.priority, state: 'reserved', retry_at: null }),
      )
      .execute();
    const { n } = await this.db
      .selectFrom('delivery_warmup_sends')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('warmup_id', '=', row.id)
      .where('destination', '=', destination)
      .where('day', '=', today)
      .where('state', 'in', ['reserved', 'sent'])
      .executeTakeFirstOrThrow();
    if (Number(n) <= cap) return null;
    const nextDay = nextDayStartMs(now);
    return deferTo(
      request.priority === 'bulk' ? nextDay + BULK_DELAY_MS : nextDay,
      `Warm-up of ${row.subject}: today's ${cap} messages to ${destination} are sent; the rest goes tomorrow`,
    );
  }

  private async defer(
    key: { warmup_id: string; email_id: string },
    destination: string,
    today: string,
    priority: Priority,
    at: number,
    reason: string,
  ) {
    const deferUntil = Math.floor(at);
    await this.db
      .insertInto('delivery_warmup_sends')
      .values({ ...key, destination, day: today, priority, state: 'deferred', retry_at: deferUntil })
      .onConflict((oc) =>
        oc.columns(['warmup_id', 'email_id']).doUpdateSet({ destination, day: today, priority, state: 'deferred', retry_at: deferUntil }),
      )
      .execute();
    return { deferUntil, reason };
  }

  /** A message let through: what address warm-ups deferred of it earlier (it was over another
   *  address's cap, then left from this one) is no backlog any more. */
  async clearAddressDeferrals(emailId: string): Promise<void> {
    const ids = (await activeWarmups(this.db)).filter((row) => row.kind === 'address').map((row) => row.id);
    if (ids.length === 0) return;
    await this.db
      .deleteFrom('delivery_warmup_sends')
      .where('warmup_id', 'in', ids)
      .where('email_id', '=', emailId)
      .where('state', '=', 'deferred')
      .execute();
  }

  /** Drops what deferrals of `warmupIds` recorded for a message that left from another source address. */
  forget(warmupIds: string[], emailId: string): Promise<void> {
    return this.release(warmupIds, emailId);
  }

  private async release(warmupIds: string[], emailId: string): Promise<void> {
    if (warmupIds.length === 0) return;
    await this.db.deleteFrom('delivery_warmup_sends').where('warmup_id', 'in', warmupIds).where('email_id', '=', emailId).execute();
  }

  /** The receiver's answer (null: none): accepted stays counted, anything else gives the place back. */
  async settle(
    ticket: WarmupTicket,
    outcome: { kind: string; code: number | null; enhancedCode: string | null; response: string; reason?: BounceReason | null } | null,
  ): Promise<void> {
    if (ticket.settled) return;
    ticket.settled = true;
    const feedback = outcome ? feedbackOf(outcome) : 'other';
    const answers = this.answersOf(ticket.destination, dayOf(nowMs()));
    if (feedback === 'throttled') answers.throttled++;
    if (feedback === 'blocked') answers.blocked++;
    if (outcome?.kind !== 'delivered') return this.release(ticket.warmupIds, ticket.emailId);
    await this.db
      .updateTable('delivery_warmup_sends')
      .set({ state: 'sent' })
      .where('warmup_id', 'in', ticket.warmupIds)
      .where('email_id', '=', ticket.emailId)
      .execute();
  }

  private answersOf(destination: string, day: string) {
    let answers = this.answers.get(destination);
    if (!answers || answers.day !== day) {
      answers = { day, throttled: 0, blocked: 0 };
      this.answers.set(destination, answers);
    }
    return answers;
  }
}
