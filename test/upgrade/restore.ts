// Restores an upgrade fixture (made by scripts/make-upgrade-fixture.ts) into a fresh database:
// the SQLite file into a temporary DATA_DIR, the PostgreSQL dump into a fresh schema of
// TEST_DATABASE_URL's database (the dump's schema renamed), as an operator restores a backup.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import pg from 'pg';
import { FIXTURE_SCHEMA, FIXTURES_DIR, type FixtureManifest } from './fixture.ts';

export interface RestoredFixture {
  url: string;
  schema?: string;
  dataDir: string;
  drop(): Promise<void>;
}

/** Every fixture's manifest, oldest release first. */
export function fixtureManifests(): FixtureManifest[] {
  return readdirSync(FIXTURES_DIR)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(join(FIXTURES_DIR, file), 'utf8')) as FixtureManifest)
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
}

export async function restoreFixture(manifest: FixtureManifest, postgresUrl: string | undefined): Promise<RestoredFixture> {
  const dataDir = mkdtempSync(join(tmpdir(), 'postlane-upgrade-'));
  if (!postgresUrl) {
    const file = join(dataDir, 'postlane.db');
    writeFileSync(file, gunzipSync(readFileSync(join(FIXTURES_DIR, `${manifest.name}.sqlite.gz`))));
    return { url: `sqlite:${file}`, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const dump = gunzipSync(readFileSync(join(FIXTURES_DIR, `${manifest.name}.postgres.sql.gz`))).toString('utf8');
  // psql's meta-commands (\restrict …) are not SQL; the fixture's schema becomes this test's.
  const statements = dump
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n')
    .replaceAll(`${FIXTURE_SCHEMA}.`, `${schema}.`)
    .replaceAll(`SCHEMA ${FIXTURE_SCHEMA}`, `SCHEMA ${schema}`);
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(statements);
  } finally {
    await client.end();
  }
  return {
    url: postgresUrl,
    schema,
    dataDir,
    async drop() {
      const c = new pg.Client({ connectionString: postgresUrl });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
