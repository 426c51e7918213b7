// What the upgrade fixtures share: where they live, the fixed schema name and encryption key
// they were made with, and the manifest written beside each (row counts, ids, keys).
import { join } from 'node:path';
import type { SeededObjects } from './seed-api.ts';

export const FIXTURES_DIR = join(import.meta.dirname, 'fixtures');

/** The PostgreSQL schema a fixture is dumped from; the test renames it on restore. */
export const FIXTURE_SCHEMA = 'postlane_fixture';

/** Seals the fixture's stored secrets (webhook secrets, DKIM keys). A test value, public on purpose. */
export const FIXTURE_ENCRYPTION_KEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0';

export interface DialectFixture {
  seeded: SeededObjects;
  /** Rows per table when the release stopped. */
  counts: Record<string, number>;
  /** Tables no API reached in the fixture run, filled in SQL. */
  filled_in_sql: string[];
}

export interface FixtureManifest {
  release: string;
  commit: string;
  name: string;
  created_at: string;
  encryption_key: string;
  dialects: { sqlite: DialectFixture; postgres: DialectFixture };
}
