// `postlane backup --out FILE` (while the server runs) and `postlane restore FILE` (server
// stopped). SQLite through its online backup API; PostgreSQL through pg_dump and pg_restore.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { loadConfig } from '../config.ts';
import { backupSqlite, pgDumpArgs, pgRestoreArgs, restoreSqlite, runTool, sqlitePathOf } from '../platform/db/backup.ts';
import { UsageError } from './usage-error.ts';

const KEY_NOTE =
  'Keep DATA_DIR/encryption.key (or your ENCRYPTION_KEY) with it: without the key, the sealed DKIM keys and webhook secrets cannot be opened.';

export async function backupCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: 'string' }, json: { type: 'boolean' } } });
  if (!values.out) throw new UsageError('backup takes --out FILE');
  const out = resolve(values.out);
  const { databaseUrl } = loadConfig();
  const sqlitePath = sqlitePathOf(databaseUrl);
  if (sqlitePath) {
    const { pages } = await backupSqlite(sqlitePath, out);
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ file: out, engine: 'sqlite', pages })}\n`
        : `Backed up ${sqlitePath} to ${out} (${pages} pages).\n${KEY_NOTE}\n`,
    );
    return 0;
  }
  const dumpArgs = pgDumpArgs(databaseUrl, out);
  await runTool('pg_dump', dumpArgs);
  process.stdout.write(
    values.json ? `${JSON.stringify({ file: out, engine: 'postgres' })}\n` : `Backed up with pg_dump to ${out}.\n${KEY_NOTE}\n`,
  );
  return 0;
}

export async function restoreCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  if (positionals.length !== 1) throw new UsageError('restore takes one backup FILE (stop the server first)');
  const file = resolve(positionals[0]);
  const { databaseUrl } = loadConfig();
  const sqlitePath = sqlitePathOf(databaseUrl);
  if (sqlitePath) {
    const { pages } = await restoreSqlite(file, sqlitePath);
    process.stdout.write(
      values.json ? `${JSON.stringify({ file, engine: 'sqlite', pages })}\n` : `Restored ${sqlitePath} from ${file} (${pages} pages).\n`,
    );
    return 0;
  }
  await runTool('pg_restore', pgRestoreArgs(databaseUrl, file));
  process.stdout.write(values.json ? `${JSON.stringify({ file, engine: 'postgres' })}\n` : `Restored with pg_restore from ${file}.\n`);
  return 0;
}
