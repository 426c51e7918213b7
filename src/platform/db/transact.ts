// A transaction that PostgreSQL may ask to run again. Under concurrent writers PostgreSQL ends
// one side of a deadlock (40P01) or a serialization failure (40001), and two requests that both
// looked for a row and both inserted it meet a unique violation (23505) in the second: in each
// case the transaction was rolled back whole, and running it again is what PostgreSQL's
// documentation advises (https://www.postgresql.org/docs/current/mvcc-serialization-failure-handling.html).
// A retry of the find-then-insert sees the row the other request committed. For transaction
// bodies that only touch the database: anything else they do would be done again.
import type { Transaction } from 'kysely';
import type { Database } from './schema.ts';
import type { Db } from './database.ts';

const ATTEMPTS = 4;

const sqlState = (error: unknown): string => (error as { code?: string } | null)?.code ?? '';

/** A deadlock victim (40P01) or a serialization failure (40001): groupCommit runs these again too. */
export const isLockConflict = (error: unknown): boolean => ['40P01', '40001'].includes(sqlState(error));

export const isRetryableConflict = (error: unknown): boolean => isLockConflict(error) || sqlState(error) === '23505';

export async function transact<T>(db: Db, body: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(body);
    } catch (error) {
      if (attempt >= ATTEMPTS || !isRetryableConflict(error)) throw error;
      // A short random wait, so that the two sides do not meet again in step.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}
