// `scheduled_at`: ISO 8601 with a zone, or English such as "tomorrow at 9am" (read in UTC).
// Past, unparsable values and Unix timestamps send at once (spec: no error).
import { lazyModule } from '../../platform/lazy-module.ts';

// chrono-node (about 4 MB of heap) loads with the first date written in English.
const chrono = lazyModule<typeof import('chrono-node')>('chrono-node');

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** The future time the email is due, or null to send now. */
export function parseScheduledAt(value: unknown, now: Date = new Date()): Date | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text === '' || /^\d+(\.\d+)?$/.test(text)) return null;
  let at: Date | null = null;
  const iso = ISO_DATE_TIME.exec(text);
  if (iso) {
    // A date-time without a zone is read as UTC, like the English forms.
    const ms = Date.parse(iso[3] ? text.replace(' ', 'T') : `${text.replace(' ', 'T')}Z`);
    at = Number.isNaN(ms) ? null : new Date(ms);
  } else {
    at = chrono().parseDate(text, { instant: now, timezone: 'UTC' }, { forwardDate: true });
  }
  if (!at || Number.isNaN(at.getTime()) || at.getTime() <= now.getTime()) return null;
  return at;
}
