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

const RETRYABLE = new Set(['40P01', '40001', '23505']);
const ATTEMPTS = 4;

export const isRetryableConflict = (error: unknown): boolean => RETRYABLE.has((error as { code?: string } | null)?.code ?? '');

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
