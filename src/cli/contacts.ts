// `postlane contacts import FILE [--workspace ID] [--audience ID] [--format csv|json] [--json]`
// and `postlane contacts export [--workspace ID] [--audience ID] [--search TEXT] [--sort KEY] [--order asc|desc] [--filter K.C=V]… [--out FILE]`,
// against the configured database like every administration command. The import streams the
// file, draws a progress bar on stderr (when it is a terminal, else a line per batch) and
// prints a summary; --workspace may be left out when there is only one.
import { createWriteStream, statSync } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import type { ImportFormat, ImportSummary } from '../resources/contacts/import/run.ts';
import { importFile, restartWithImportMemorySettings, workspaceOf } from './contacts-import.ts';
import { countExport, exportContacts } from '../resources/contacts/export.ts';
import { withDatabase } from './workspace.ts';
import { UsageError } from './usage-error.ts';

function bar(done: number, total: number, width = 30): string {
  const share = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(share * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%`;
}

function describe(summary: ImportSummary, seconds: number): string {
  const lines = [
    `${summary.status === 'completed' ? 'Imported' : 'Import stopped:'} ${summary.rows.toLocaleString('en-US')} rows in ${seconds.toFixed(1)} s (${summary.format})`,
    `  created ${summary.created}, updated ${summary.updated}, unchanged ${summary.unchanged}, skipped ${summary.skipped}`,
  ];
  if (summary.audience_id) {
    lines.push(
      `  audience ${summary.audience_id}: subscribed ${summary.subscribed}, already subscribed ${summary.already_subscribed}, kept unsubscribed ${summary.kept_unsubscribed}`,
    );
  }
  if (summary.suppressed) lines.push(`  ${summary.suppressed} rows have an active suppression (kept; campaigns skip them)`);
  for (const problem of summary.errors.slice(0, 20))
    lines.push(`  row ${problem.row}${problem.email ? ` (${problem.email})` : ''}: ${problem.reason}`);
  if (summary.skipped > 20) lines.push(`  … ${summary.skipped - 20} more skipped rows (--json lists up to 1,000)`);
  if (summary.error) lines.push(summary.error);
  return `${lines.join('\n')}\n`;
}

async function importCommand(rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { workspace: { type: 'string' }, audience: { type: 'string' }, format: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (positionals.length !== 1) throw new UsageError('contacts import takes one FILE');
  const [file] = positionals;
  if (values.format && values.format !== 'csv' && values.format !== 'json') throw new UsageError('--format must be csv or json');
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new UsageError(`cannot read ${file}`);
  }
  restartWithImportMemorySettings();
  const started = performance.now();
  const tty = process.stderr.isTTY;
  const summary = await importFile(
    { file, workspace: values.workspace, audience: values.audience, format: values.format as ImportFormat | undefined },
    (rows, read) => {
      const rate = Math.round(rows / ((performance.now() - started) / 1000));
      const line = `${bar(read, size)} ${rows.toLocaleString('en-US')} rows, ${rate.toLocaleString('en-US')}/s`;
      process.stderr.write(tty ? `\r${line}` : `${line}\n`);
    },
  );
  if (tty) process.stderr.write('\n');
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(values.json ? `${JSON.stringify(summary)}\n` : describe(summary, seconds));
  return summary.status === 'completed' ? 0 : 1;
}

async function exportCommand(rest: string[]): Promise<number> {
  const { values } = parseArgs({
    args: rest,
    options: {
      workspace: { type: 'string' },
      audience: { type: 'string' },
      search: { type: 'string' },
      unsubscribed: { type: 'string' },
      sort: { type: 'string' },
      order: { type: 'string' },
      filter: { type: 'string', multiple: true },
      out: { type: 'string' },
    },
  });
  if (values.order && values.order !== 'asc' && values.order !== 'desc') throw new UsageError('--order must be asc or desc');
  const query: Record<string, string | string[]> = {};
  if (values.audience) query.audience_id = values.audience;
  if (values.search) query.search = values.search;
  if (values.unsubscribed) query.unsubscribed = values.unsubscribed;
  if (values.sort) query.sort = values.sort;
  if (values.order) query.order = values.order;
  // --filter key.condition=value, as the list's query parameters (first_name.contains=ann).
  for (const filter of values.filter ?? []) {
    const match = /^([^=]+\.[a-z_]+)=(.*)$/s.exec(filter);
    if (!match) throw new UsageError(`--filter takes key.condition=value (got "${filter}")`);
    const [, key, value] = match;
    query[key] = [...(query[key] === undefined ? [] : ([] as string[]).concat(query[key])), value];
  }
  await withDatabase(async (db) => {
    const workspaceId = await workspaceOf(db, values.workspace);
    const total = await countExport(db, workspaceId, query);
    const tty = process.stderr.isTTY;
    let shown = 0;
    // Progress on stderr (the CSV may be on stdout): redrawn on a terminal, else a line a second.
    const progress = (exported: number) => {
      const now = performance.now();
      if (!tty && exported < total && now - shown < 1000) return;
      shown = now;
      const line = `${bar(exported, total)} ${exported.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} contacts`;
      process.stderr.write(tty ? `\r${line}` : `${line}\n`);
    };
    const out = values.out ? createWriteStream(values.out) : process.stdout;
    for await (const chunk of exportContacts(db, workspaceId, query, progress)) {
      if (!out.write(chunk)) await once(out, 'drain');
    }
    if (total === 0) progress(0);
    if (tty) process.stderr.write('\n');
    if (values.out) await new Promise<void>((resolve) => out.end(() => resolve()));
  });
  return 0;
}

export async function contactsCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action === 'import') return importCommand(rest);
  if (action === 'export') return exportCommand(rest);
  throw new UsageError('contacts takes import FILE or export');
}
