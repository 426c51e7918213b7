// Backups while the server runs. SQLite: the online backup API (node:sqlite `backup()`): a
// consistent copy of the database as of one moment, taken in one step through its own read
// transaction, so writers in WAL mode are never blocked. PostgreSQL: pg_dump's custom format
// (its own consistent snapshot), restored by pg_restore; the schema of DATABASE_URL's
// search_path only, when it names one.
import { spawn } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { backup, DatabaseSync } from 'node:sqlite';

// One step: all pages at once. Several small steps would restart whenever a writer commits.
const ALL_PAGES = 2 ** 31 - 1;

export class BackupError extends Error {
  override name = 'BackupError';
}

export const sqlitePathOf = (databaseUrl: string) => (databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : null);

export async function backupSqlite(databasePath: string, out: string): Promise<{ pages: number }> {
  if (!existsSync(databasePath)) throw new BackupError(`no database at ${databasePath}`);
  const source = new DatabaseSync(databasePath, { readOnly: true });
  const partial = `${out}.partial`;
  try {
    source.exec('PRAGMA busy_timeout = 10000');
    const pages = await backup(source, partial, { rate: ALL_PAGES });
    renameSync(partial, out);
    return { pages };
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    source.close();
  }
}

/** Replaces the database at `databasePath` with the backup `file` (the server must be stopped). */
export async function restoreSqlite(file: string, databasePath: string): Promise<{ pages: number }> {
  if (!existsSync(file)) throw new BackupError(`no backup file at ${file}`);
  const source = new DatabaseSync(file, { readOnly: true });
  try {
    const check = source.prepare('PRAGMA quick_check').get() as { quick_check?: string } | undefined;
    if (check?.quick_check !== 'ok') throw new BackupError(`${file} is damaged: ${check?.quick_check}`);
    const migrations = source.prepare("select count(*) as n from sqlite_master where name = 'kysely_migration'").get() as { n: number };
    if (Number(migrations.n) === 0) throw new BackupError(`${file} is not a Postlane database`);
    // Written through SQLite into the live file (its WAL included), never a file copy under it.
    return { pages: await backup(source, databasePath, { rate: ALL_PAGES }) };
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${file} cannot be restored: ${(error as Error).message}`);
  } finally {
    source.close();
  }
}

/** pg_dump's arguments for DATABASE_URL: the schema of its search_path option, if any. */
export function pgDumpArgs(databaseUrl: string, out: string): string[] {
  const schema = schemaOf(databaseUrl);
  return [
    '--format=custom',
    '--no-owner',
    '--no-privileges',
    ...(schema ? [`--schema=${schema}`] : []),
    `--file=${out}`,
    `--dbname=${withoutOptions(databaseUrl)}`,
  ];
}

export function pgRestoreArgs(databaseUrl: string, file: string): string[] {
  return [
    '--clean',
    '--if-exists',
    '--no-owner',
    '--no-privileges',
    '--single-transaction',
    '--exit-on-error',
    `--dbname=${withoutOptions(databaseUrl)}`,
    file,
  ];
}

function schemaOf(databaseUrl: string): string | null {
  const options = new URL(databaseUrl).searchParams.get('options') ?? '';
  return /search_path=([A-Za-z_][A-Za-z0-9_]*)/.exec(options)?.[1] ?? null;
}

// pg_dump sets its own search_path; a schema given in the URL's options would only confuse it.
function withoutOptions(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.delete('options');
  return url.toString();
}

export function runTool(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (data) => (stderr += data));
    child.on('error', (error) =>
      reject(new BackupError(`${command} could not run (${error.message}); install the PostgreSQL client tools of your server's version`)),
    );
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new BackupError(`${command} failed (exit ${code}): ${stderr.trim()}`))));
  });
}
