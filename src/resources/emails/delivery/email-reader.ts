// The email a deliver job is about, with its stored content. Jobs are claimed a few at a time
// and start in the same turn of the event loop; on PostgreSQL their reads are joined into one
// query (one round trip per claim, not per email). On SQLite a read is a synchronous call
// without a round trip, so each job reads its own row.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import { dialectOf } from '../../../platform/db/database.ts';
import { preparedQuery } from '../../../platform/db/prepared.ts';

const withContent = (db: Db) =>
  db
    .selectFrom('emails')
    .leftJoin('email_contents', 'email_contents.id', 'emails.content_id')
    .selectAll('emails')
    .select(['email_contents.message as content_message', 'email_contents.purged_at as content_purged_at']);

const emailWithContent = preparedQuery((db, p: { id: string }) => withContent(db).where('emails.id', '=', p.id));
// One array parameter, so the statement is compiled once whatever the batch size.
const emailsWithContent = preparedQuery((db, p: { ids: string[] }) => withContent(db).where(sql<boolean>`emails.id = any(${p.ids})`));

export type EmailWithContent = Awaited<ReturnType<typeof emailWithContent>>[number];

export class EmailReader {
  private readonly db: Db;
  private readonly batched: boolean;
  private waiting = new Map<string, Array<{ resolve(row: EmailWithContent | undefined): void; reject(error: unknown): void }>>();

  constructor(db: Db) {
    this.db = db;
    this.batched = dialectOf(db) === 'postgres';
  }

  async read(id: string): Promise<EmailWithContent | undefined> {
    if (!this.batched) return (await emailWithContent(this.db, { id }))[0];
    return new Promise((resolve, reject) => {
      const first = this.waiting.size === 0;
      const waiters = this.waiting.get(id);
      if (waiters) waiters.push({ resolve, reject });
      else this.waiting.set(id, [{ resolve, reject }]);
      if (first) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting;
    this.waiting = new Map();
    try {
      const rows = await emailsWithContent(this.db, { ids: [...batch.keys()] });
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const [id, waiters] of batch) for (const waiter of waiters) waiter.resolve(byId.get(id));
    } catch (error) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
    }
  }
}
