// Times to the second, for pages where the order of close events matters (an email's attempts,
// webhook requests, the event stream); the full ISO time is kept in <time datetime>.
export function formatSeconds(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}
