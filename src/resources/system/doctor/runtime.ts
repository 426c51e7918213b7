// The server itself: its clock (DKIM signatures and TLS certificates are checked against
// time), the free space where DATA_DIR lives, and the database.
import { statfs } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import { pendingMigrations } from '../../../platform/db/migrate.ts';
import { fail, pass, skip, warn, PROBE_TIMEOUT_MS, type DoctorCheck } from './types.ts';

export const CLOCK_WARN_MS = 2_000;
export const CLOCK_FAIL_MS = 60_000;

export async function checkClock(timeUrl: string | null, nowMs: () => number = Date.now): Promise<DoctorCheck> {
  const id = 'clock';
  if (!timeUrl) return skip(id, 'DOCTOR_TIME_URL is off; the clock was not compared');
  try {
    const before = nowMs();
    const response = await fetch(timeUrl, { method: 'HEAD', signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: 'manual' });
    const after = nowMs();
    const date = response.headers.get('date');
    if (!date || Number.isNaN(Date.parse(date))) return skip(id, `${timeUrl} sent no Date header; the clock was not compared`);
    // The Date header has one-second resolution and was made at some point of the round trip.
    const offset = Date.parse(date) + 500 - (before + after) / 2;
    const seconds = (offset / 1000).toFixed(1);
    const fix = 'Run a time synchronisation service (systemd-timesyncd or chrony) and check `timedatectl`';
    if (Math.abs(offset) >= CLOCK_FAIL_MS) return fail(id, `The clock is ${seconds} s off the time of ${timeUrl}`, fix);
    if (Math.abs(offset) >= CLOCK_WARN_MS + 1000) return warn(id, `The clock is ${seconds} s off the time of ${timeUrl}`, fix);
    return pass(id, `The clock agrees with ${timeUrl} (${seconds} s)`);
  } catch (error) {
    return skip(id, `${timeUrl} could not be reached (${(error as Error).message}); the clock was not compared`);
  }
}

export const DISK_WARN_BYTES = 2 * 1024 ** 3;
export const DISK_FAIL_BYTES = 200 * 1024 ** 2;

export async function checkDisk(dataDir: string): Promise<DoctorCheck> {
  const id = 'disk_space';
  let stats;
  try {
    stats = await statfs(dataDir);
  } catch (error) {
    return fail(
      id,
      `DATA_DIR ${dataDir} cannot be read (${(error as NodeJS.ErrnoException).code})`,
      'Create DATA_DIR and make it writable by the user Postlane runs as',
    );
  }
  const free = stats.bavail * stats.bsize;
  const share = stats.blocks > 0 ? stats.bavail / stats.blocks : 1;
  const found = `${(free / 1024 ** 3).toFixed(1)} GB free (${Math.round(share * 100)} %) where DATA_DIR (${dataDir}) lives`;
  const fix = 'Free space or grow the volume; lower CONTENT_RETENTION_DAYS to keep message bodies for less time';
  if (free < DISK_FAIL_BYTES) return fail(id, found, fix);
  if (free < DISK_WARN_BYTES || share < 0.05) return warn(id, found, fix);
  return pass(id, found);
}

export async function checkDatabase(db: Db): Promise<DoctorCheck> {
  const id = 'database';
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    return fail(
      id,
      `The database cannot be reached: ${(error as Error).message}`,
      'Check DATABASE_URL and that the database server is running',
    );
  }
  try {
    const pending = await pendingMigrations(db);
    if (pending.length > 0)
      return fail(
        id,
        `The database is reachable; ${pending.length} migration(s) are not applied: ${pending.join(', ')}`,
        'Run `postlane migrate` (or restart the server, which migrates at start)',
      );
  } catch (error) {
    return fail(id, `The migrations could not be read: ${(error as Error).message}`, 'Run `postlane migrate`');
  }
  return pass(id, 'The database is reachable and every migration is applied');
}
