// Migrations live as files in ./migrations, applied in name order on both engines. Each
// resource adds its own file (named `NNNN_resource.ts`), so no shared list needs editing.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { dialectOf, type Db } from './database.ts';

const migrationsDir = join(import.meta.dirname, 'migrations');

const provider: MigrationProvider = {
  async getMigrations() {
    const files = (await readdir(migrationsDir)).filter((f) => f.endsWith('.ts')).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      migrations[file.replace(/\.ts$/, '')] = await import(pathToFileURL(join(migrationsDir, file)).href);
    }
    return migrations;
  },
};

export async function migrateToLatest(db: Db): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema it can see; on PostgreSQL pin it to
  // the connection's own schema, or another schema's tables (other tenants, tests) confuse it.
  let migrationTableSchema: string | undefined;
  if (dialectOf(db) === 'postgres') {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
    migrationTableSchema = rows[0]?.schema ?? undefined;
  }
  // Each resource owns its migration files, and they do not depend on one another, so a
  // migration merged with a lower number than one already applied still runs.
  const migrator = new Migrator({ db, provider, migrationTableSchema, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
