// The `from` and `to` parameters of the DMARC lists and breakdowns
// (https://emailit.com/docs/api-reference/dmarc.md): the report period starts on or after `from`
// and on or before `to`; a date without a time covers the whole UTC day.
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { isoFromMs } from '../../platform/clock.ts';
import { plainError } from '../../platform/http/errors.ts';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

export interface PeriodQuery {
  from?: string;
  to?: string;
}

export interface PeriodBounds {
  /** Inclusive start (null: unbounded). */
  start: string | null;
  /** End (null: unbounded): exclusive after a bare date (the next day's midnight), inclusive after an instant. */
  end: string | null;
  endInclusive: boolean;
}

/** The bounds as ISO strings; 400 for a value that is not a date. */
export function periodBounds(query: PeriodQuery): PeriodBounds {
  const read = (name: 'from' | 'to'): { ms: number; dateOnly: boolean } | null => {
    const value = query[name]?.trim();
    if (!value) return null;
    const dateOnly = DATE_ONLY.test(value);
    const ms = Date.parse(dateOnly ? `${value}T00:00:00Z` : value);
    if (Number.isNaN(ms))
      throw plainError(400, `${name} must be an ISO 8601 date or date-time, such as 2026-01-31 or 2026-01-31T12:00:00Z`);
    return { ms, dateOnly };
  };
  const from = read('from');
  const to = read('to');
  return {
    start: from ? isoFromMs(from.ms) : null,
    // "On or before": through the end of a bare date's day, or the given instant itself.
    end: to ? isoFromMs(to.dateOnly ? to.ms + DAY_MS : to.ms) : null,
    endInclusive: Boolean(to && !to.dateOnly),
  };
}

/** The condition on a `period_start` column (always true without bounds). */
export function periodCondition(eb: ExpressionBuilder<any, any>, column: string, bounds: PeriodBounds): Expression<SqlBool> {
  const parts: Expression<SqlBool>[] = [];
  if (bounds.start) parts.push(eb(sql.ref(column), '>=', bounds.start));
  if (bounds.end) parts.push(eb(sql.ref(column), bounds.endInclusive ? '<=' : '<', bounds.end));
  return parts.length ? eb.and(parts) : sql<SqlBool>`1 = 1`;
}
