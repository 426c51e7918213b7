// Tracking keys (https://emailit.com/docs/api-reference/tracking-keys/) and what the tracking
// script sends with them (https://emailit.com/docs/events/tracking-script/). A key is public:
// it can only record workspace and custom events and identify a visitor, from the sites it
// allows, at a bounded rate per key and visitor address.
import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { newId, looksLikeId, randomAlphanumeric } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { groupCommit } from '../../platform/db/group-commit.ts';
import { ApiError, fieldValidationError, messageError, plainError, planRequiredError } from '../../platform/http/errors.ts';
import { pageLimitList, type Query } from '../../platform/http/lists.ts';
import { SlidingWindowLimiter } from '../../platform/http/rate-limit.ts';
import { getWorkspace } from '../workspaces/service.ts';
import { findContactByEmail } from '../contacts/service.ts';
import { PLAN_EVENT_TYPES, recordEvents, requireEventsPlan, type TrackingKeysTable } from '../product-events/service.ts';
import { MAX_ALLOWED_ORIGINS, normalizeAllowedOrigin, originAllowed } from './origins.ts';

type TrackingKeyRow = Selectable<TrackingKeysTable>;

export const MAX_TRACKING_KEYS = 25;
/** Requests the script may make per key and visitor address. */
export const COLLECT_LIMIT = 120;
export const COLLECT_WINDOW_MS = 60_000;

export function scriptUrl(publicUrl: string, key: string): string {
  return `${publicUrl.replace(/\/$/, '')}/js/track/${key}.js`;
}

export function trackingKeyObject(row: TrackingKeyRow, publicUrl: string) {
  return {
    object: 'tracking_key' as const,
    id: row.id,
    name: row.name,
    key: row.key,
    allowed_origins: JSON.parse(row.allowed_origins) as string[],
    script_url: scriptUrl(publicUrl, row.key),
    last_used_at: row.last_used_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function checkOrigins(input: string[] | undefined): string[] | undefined {
  if (input === undefined) return undefined;
  const problems: string[] = [];
  const out = input.map((entry, i) => {
    const normalized = normalizeAllowedOrigin(entry);
    if (normalized === null)
      problems.push(
        `allowed_origins.${i}: "${entry}" is not an origin (https://shop.example.com), a host (shop.example.com) or a wildcard (*.example.com).`,
      );
    return normalized ?? '';
  });
  if (input.length > MAX_ALLOWED_ORIGINS) problems.push(`A key allows at most ${MAX_ALLOWED_ORIGINS} origins.`);
  if (problems.length > 0) throw fieldValidationError({ allowed_origins: problems });
  return [...new Set(out)];
}

export interface TrackingKeyInput {
  name?: string;
  allowed_origins?: string[];
}

export async function createTrackingKey(db: Db, publicUrl: string, workspaceId: string, input: TrackingKeyInput) {
  const origins = checkOrigins(input.allowed_origins) ?? [];
  const name = (input.name ?? 'Website').trim();
  if (name === '') throw fieldValidationError({ name: ['The name must not be empty.'] });
  return db.transaction().execute(async (tx) => {
    const workspace = await getWorkspace(tx, workspaceId);
    if (!workspace || PLAN_EVENT_TYPES[workspace.plan] === 0)
      throw planRequiredError('pro', 'Website tracking is available on the Pro, Business and Custom plans');
    const count = await tx
      .selectFrom('tracking_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_TRACKING_KEYS)
      throw messageError(
        403,
        'tracking_key_limit_reached',
        `A workspace can have up to ${MAX_TRACKING_KEYS} tracking keys; delete one first`,
      );
    const now = nowIso();
    const row: TrackingKeyRow = {
      id: newId('tkey'),
      workspace_id: workspaceId,
      name,
      key: `pk_${randomAlphanumeric(32)}`,
      allowed_origins: JSON.stringify(origins),
      last_used_at: null,
      created_at: now,
      updated_at: now,
    };
    await tx.insertInto('tracking_keys').values(row).execute();
    return trackingKeyObject(row, publicUrl);
  });
}

async function findTrackingKey(db: Db, workspaceId: string, id: string): Promise<TrackingKeyRow> {
  const row = looksLikeId(id, 'tkey')
    ? await db.selectFrom('tracking_keys').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
    : undefined;
  if (!row) throw plainError(404, 'Tracking key not found');
  return row;
}

export async function getTrackingKey(db: Db, publicUrl: string, workspaceId: string, id: string) {
  return trackingKeyObject(await findTrackingKey(db, workspaceId, id), publicUrl);
}

export async function listTrackingKeys(db: Db, publicUrl: string, workspaceId: string, query: Query, requestUrl: string) {
  const rows = db
    .selectFrom('tracking_keys')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc');
  return pageLimitList(rows, query, requestUrl, 25, (row) => trackingKeyObject(row, publicUrl));
}

export async function updateTrackingKey(db: Db, publicUrl: string, workspaceId: string, id: string, input: TrackingKeyInput) {
  const row = await findTrackingKey(db, workspaceId, id);
  const origins = checkOrigins(input.allowed_origins);
  const name = input.name?.trim();
  if (name === '') throw fieldValidationError({ name: ['The name must not be empty.'] });
  const changes = { ...(name ? { name } : {}), ...(origins ? { allowed_origins: JSON.stringify(origins) } : {}), updated_at: nowIso() };
  await db.updateTable('tracking_keys').set(changes).where('id', '=', row.id).execute();
  forgetKey(row.key);
  return trackingKeyObject({ ...row, ...changes }, publicUrl);
}

export async function deleteTrackingKey(db: Db, workspaceId: string, id: string) {
  const row = await findTrackingKey(db, workspaceId, id);
  await db.deleteFrom('tracking_keys').where('id', '=', row.id).execute();
  forgetKey(row.key);
  return { object: 'tracking_key' as const, id: row.id, deleted: true as const };
}

// The script's requests look their key up often: kept a moment, dropped at once on a change here.
const CACHE_MS = 1000;
const cached = new Map<string, { row: TrackingKeyRow | null; expires: number }>();
function forgetKey(key: string): void {
  cached.delete(key);
}

export async function liveTrackingKey(db: Db, key: string): Promise<TrackingKeyRow | null> {
  if (!/^pk_[A-Za-z0-9]{32}$/.test(key)) return null;
  const hit = cached.get(key);
  if (hit && hit.expires > Date.now()) return hit.row;
  const row = (await db.selectFrom('tracking_keys').selectAll().where('key', '=', key).executeTakeFirst()) ?? null;
  if (cached.size > 10_000) cached.clear();
  cached.set(key, { row, expires: Date.now() + CACHE_MS });
  return row;
}

export const originRefused = () =>
  messageError(403, 'origin_not_allowed', "This tracking key does not accept events from this site; add it to the key's allowed_origins");

const limiter = new SlidingWindowLimiter(COLLECT_LIMIT, COLLECT_WINDOW_MS);

/** The key's limit for one visitor address; throws 429 when it is spent. */
export function checkCollectLimit(key: string, ip: string): void {
  const decision = limiter.hit(`${key}|${ip}`);
  if (!decision.allowed) {
    const body = {
      error: 'Rate limit exceeded',
      message: `Too many tracking requests: at most ${decision.limit} per minute from one address with one key`,
      limit: decision.limit,
      current: decision.limit,
      retry_after: decision.retryAfter,
    };
    throw new ApiError(429, body, { 'retry-after': String(decision.retryAfter) });
  }
}

export interface CollectInput {
  kind: 'track' | 'identify';
  type?: string;
  properties?: Record<string, unknown>;
  email?: string;
  anonymous_id: string;
  url?: string;
}

/** Records what the script sent: an event, or an identify tying the visitor to an address. */
export async function collect(db: Db, row: TrackingKeyRow, input: CollectInput) {
  const { plan } = await requireEventsPlan(db, row.workspace_id);
  const context = { anonymous_id: input.anonymous_id, ...(input.url ? { url: input.url } : {}) };
  const result = await groupCommit(db, async (tx) => {
    if (input.kind === 'track') {
      if (!input.type) throw fieldValidationError({ type: ['The type is required for track.'] });
      const [event] = await recordEvents(
        tx,
        row.workspace_id,
        plan,
        [{ type: input.type, properties: input.properties, email: input.email, context }],
        'tracking',
        () => '',
      );
      return { object: 'event' as const, id: event.id, type: event.type };
    }
    const email = input.email?.trim().toLowerCase() ?? '';
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw fieldValidationError({ email: ["identify needs the visitor's email address."] });
    const contact = await findContactByEmail(tx, row.workspace_id, email);
    const event = await emitEvent(tx, row.workspace_id, 'contact.identified', {
      id: newId('idn'),
      object: 'identification',
      email,
      contact_id: contact?.id ?? null,
      anonymous_id: input.anonymous_id,
      url: input.url ?? null,
      created_at: nowIso(),
    });
    if (contact)
      await tx
        .insertInto('contact_events')
        .values({ event_id: event.id, workspace_id: row.workspace_id, contact_id: contact.id, created_at: event.createdAt })
        .execute();
    return { object: 'event' as const, id: event.id, type: event.type };
  });
  // last_used_at at most once a minute per key (not a write per page view).
  const now = nowIso();
  if (!row.last_used_at || Date.parse(row.last_used_at) < Date.now() - 60_000) {
    row.last_used_at = now;
    await db.updateTable('tracking_keys').set({ last_used_at: now }).where('id', '=', row.id).execute();
  }
  return result;
}
