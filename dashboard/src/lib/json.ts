// JSON typed by hand in the dashboard (a form's definition, a workflow, a run's payload).

/** Where a JSON.parse error is, as line and column (Chromium says "at position N"). */
export function jsonError(text: string, error: Error): string {
  const at = /position (\d+)/.exec(error.message);
  if (!at) return error.message;
  const before = text.slice(0, Number(at[1])).split('\n');
  return `${error.message.replace(/\s*\(line \d+ column \d+\)/, '')} (line ${before.length}, column ${before[before.length - 1].length + 1})`;
}
