// Request values of suppressions: the address and `keep_until` (ISO 8601, Unix seconds as a
// number or numeric string, English such as "in 30 days" via chrono-node, or null).
import { lazyModule } from '../../platform/lazy-module.ts';
import { nowMs } from '../../platform/clock.ts';
import { plainError } from '../../platform/http/errors.ts';

// chrono-node (about 4 MB of heap) loads with the first date written in English.
const chrono = lazyModule<typeof import('chrono-node')>('chrono-node');

export const SUPPRESSION_TYPES = ['recipient', 'bounce', 'complaint', 'unsubscribe'] as const;
export type SuppressionType = (typeof SUPPRESSION_TYPES)[number];

export { normalizeAddress, requireAddress } from '../../platform/addresses.ts';

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const NUMERIC = /^[+-]?\d+(?:\.\d+)?$/;
// Kept within four-digit years so stored values compare correctly as strings.
const MIN_MS = Date.UTC(1970, 0, 1);
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const badKeepUntil = () =>
  plainError(400, 'Invalid keep_until: use an ISO 8601 date, Unix seconds, a phrase such as "in 30 days", or null');

/** `keep_until` as stored (ISO 8601 UTC with microseconds) or null for permanent; 400 when unparsable. */
export function parseKeepUntil(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return fromUnixSeconds(value);
  const text = value.trim();
  if (NUMERIC.test(text)) return fromUnixSeconds(Number(text));
  const iso = ISO.exec(text);
  if (iso) return fromIso(iso);
  return fromEnglish(text);
}

function fromUnixSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) throw badKeepUntil();
  return iso(Math.floor(seconds * 1000), 0);
}

function fromIso(match: RegExpExecArray): string {
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone = 'Z'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number);
  const at = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(at);
  // Date.UTC rolls 2026-02-30 over to March; a real date survives the round trip.
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    throw badKeepUntil();
  }
  let offsetMinutes = 0;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0));
    if (Math.abs(offsetMinutes) > 18 * 60) throw badKeepUntil();
  }
  const micros = Number(fraction.padEnd(6, '0').slice(0, 6));
  return iso(at - offsetMinutes * 60_000 + Math.floor(micros / 1000), micros % 1000);
}

/** English such as "tomorrow at 9am" or "in 30 days", read in UTC and toward the future.
 *  The whole text must be the date: "hello tomorrow world" is rejected. */
function fromEnglish(text: string): string {
  const results = chrono().parse(text, { instant: new Date(nowMs()), timezone: 'UTC' }, { forwardDate: true });
  const [result] = results;
  if (results.length !== 1 || result.index !== 0 || result.text.length !== text.length) throw badKeepUntil();
  return iso(result.start.date().getTime(), 0);
}

function iso(ms: number, micros: number): string {
  if (!(ms >= MIN_MS && ms <= MAX_MS)) throw badKeepUntil();
  return new Date(ms).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}
