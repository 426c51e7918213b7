// Migrations live as files in ./migrations, applied in name order on both engines. Each
// resource adds its own file (named `NNNN_resource.ts`), so no shared list needs editing.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import type { Db } from './database.ts';

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
  // On PostgreSQL the Migrator finds its bookkeeping tables in the connection's own schema only
  // (database.ts gives Kysely an introspector that looks nowhere else), so other schemas of the
  // same database (other tenants, tests) neither confuse it nor break it by being dropped.
  // Each resource owns its migration files, and they do not depend on one another, so a
  // migration merged with a lower number than one already applied still runs.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of the migrations not applied to this database yet (readiness, `postlane doctor`). */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  return (await migrator.getMigrations()).filter((migration) => !migration.executedAt).map((migration) => migration.name);
}
