// The events API: https://emailit.com/docs/api-reference/events/,
// https://emailit.com/docs/api-reference/pagination/. v2 lists the last two days unless a
// created_at filter is given, newest first, 100 a page, and refuses pages starting past offset
// 2,500; the legacy v1 list pages with per_page.
import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { EventsTable } from '../../platform/db/schema.ts';
import { isoFromMs, nowMs } from '../../platform/clock.ts';
import { looksLikeId } from '../../platform/ids.ts';
import { ApiError, plainError } from '../../platform/http/errors.ts';
import { applyListQuery, pageLimitList, pagingFrom, perPageList, type ListSpec, type Query } from '../../platform/http/lists.ts';

// What other features read about event types (webhooks, automations).
export { isCustomEventType, NOT_IN_ALL_EVENTS, PAYLOAD_SHAPES, sampleEventObject } from './payloads.ts';

type EventRow = Selectable<EventsTable>;

export const EVENTS_DEFAULT_LIMIT = 100;
export const EVENTS_MAX_OFFSET = 2500;
export const EVENTS_DEFAULT_WINDOW_MS = 2 * 24 * 3600_000;
/** What `scope` filters on (https://emailit.com/docs/api-reference/events/). */
export const EVENT_SCOPES = ['system', 'workspace', 'custom'];

export function eventObject(row: EventRow, includeData = true) {
  return {
    object: 'event' as const,
    id: row.id,
    type: row.type,
    ...(includeData ? { data: { object: JSON.parse(row.data) as Record<string, unknown> } } : {}),
    created_at: row.created_at,
  };
}

/** A stable UUID for the v1 model's `uuid`, derived from the event id. */
export function eventUuid(id: string): string {
  const bytes = createHash('sha256').update(id).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8 (custom)
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function legacyEventObject(row: EventRow) {
  return {
    id: row.id,
    uuid: eventUuid(row.id),
    type: row.type,
    data: JSON.parse(row.data) as Record<string, unknown>,
    created_at: row.created_at,
    updated_at: row.created_at,
  };
}

const listSpec: ListSpec = {
  fields: {
    type: { type: 'string' },
    created_at: { type: 'date' },
  },
  sortConvention: 'order-direction',
  idColumn: 'seq',
};

/** One type or a comma-separated list (repeated parameters too). */
export function eventTypes(value: string | string[] | undefined): string[] {
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return [
    ...new Set(
      values
        .flatMap((v) => v.split(','))
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
}

function parsesAsDate(value: string): boolean {
  return value
    .split(',')
    .every(
      (part) =>
        part.trim() !== '' && !Number.isNaN(Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(part.trim()) ? `${part.trim()}T00:00:00Z` : part.trim())),
    );
}

/** True when the query carries a usable created_at filter (it replaces the two-day window). */
export function hasCreatedAtFilter(query: Query): boolean {
  return Object.entries(query).some(([key, value]) => {
    if (!key.startsWith('created_at.') || value === undefined) return false;
    return (Array.isArray(value) ? value : [value]).some(parsesAsDate);
  });
}

function truthy(value: unknown): boolean {
  return value === true || value === 'true' || value === '1' || value === 1;
}

export async function listEvents(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const paging = pagingFrom(query, EVENTS_DEFAULT_LIMIT);
  const offset = (paging.page - 1) * paging.limit;
  if (offset > EVENTS_MAX_OFFSET) {
    throw new ApiError(422, {
      error: 'events_offset_too_large',
      message: `Pages may start at offset ${EVENTS_MAX_OFFSET} at most (this page starts at ${offset}); narrow the list with created_at filters`,
    });
  }
  let base = db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId);
  if (!hasCreatedAtFilter(query)) base = base.where('created_at', '>=', isoFromMs(nowMs() - EVENTS_DEFAULT_WINDOW_MS));
  const types = eventTypes(query.type);
  if (types.length > 0) base = base.where('type', 'in', types);
  const scopes = eventTypes(query.scope);
  if (scopes.length > 0) {
    const unknown = scopes.filter((s) => !EVENT_SCOPES.includes(s));
    if (unknown.length > 0)
      throw new ApiError(422, {
        error: 'invalid_scope',
        message: `scope must be one or more of ${EVENT_SCOPES.join(', ')}; got ${unknown.join(', ')}`,
      });
    // The scope is the type's prefix (w: workspace, c: custom, none: system).
    base = base.where((eb) =>
      eb.or(
        scopes.map((s) =>
          s === 'workspace'
            ? eb('type', 'like', 'w:%')
            : s === 'custom'
              ? eb('type', 'like', 'c:%')
              : eb.and([eb('type', 'not like', 'w:%'), eb('type', 'not like', 'c:%')]),
        ),
      ),
    );
  }
  const includeData = truthy(query.include_data);
  return pageLimitList(applyListQuery(base, query, listSpec), query, requestUrl, EVENTS_DEFAULT_LIMIT, (row) =>
    eventObject(row, includeData),
  );
}

async function findEvent(db: Db, workspaceId: string, id: string): Promise<EventRow> {
  const eventId = looksLikeId(id, 'evt') ? id : looksLikeId(`evt_${id}`, 'evt') ? `evt_${id}` : null;
  const row = eventId
    ? await db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', eventId).executeTakeFirst()
    : undefined;
  if (!row) throw plainError(404, 'Event not found');
  return row;
}

export async function getEvent(db: Db, workspaceId: string, id: string) {
  return eventObject(await findEvent(db, workspaceId, id));
}

export async function listLegacyEvents(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  let base = db.selectFrom('events').where('workspace_id', '=', workspaceId);
  const types = eventTypes(query['filter[type]']);
  if (types.length > 0) base = base.where('type', 'in', types);
  const rows = base.selectAll().orderBy('created_at', 'desc').orderBy('seq', 'desc');
  return perPageList(rows, base.select('id'), query, legacyEventObject, requestUrl);
}

export async function getLegacyEvent(db: Db, workspaceId: string, id: string) {
  return legacyEventObject(await findEvent(db, workspaceId, id));
}
