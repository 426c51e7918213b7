// Tables that no API of a release leaves rows in after a short fixture run get one row in SQL,
// so that every table of the release is covered by the upgrade test. Each filler writes a row
// the release itself would write; a table with neither rows nor a filler fails the script.
export interface FixtureDb {
  dialect: 'sqlite' | 'postgres';
  tables(): Promise<string[]>;
  count(table: string): Promise<number>;
  columns(table: string): Promise<Array<{ name: string; notNull: boolean; type: string }>>;
  /** `?` placeholders on both dialects. */
  query(text: string, params?: unknown[]): Promise<Array<Record<string, unknown>>>;
}

type Filler = (db: FixtureDb, ids: Record<string, string>) => Promise<void>;

const fillers: Record<string, Filler> = {
  // The dispatcher drains the outbox within milliseconds: leave one event waiting for the
  // webhook, as a server stopped between an event and its post would.
  async webhook_outbox(db, ids) {
    const [event] = await db.query('select id from events order by created_at desc, id desc limit 1');
    await db.query('insert into webhook_outbox (webhook_id, event_id, created_at) values (?, ?, ?)', [
      ids.webhook,
      event.id,
      new Date().toISOString(),
    ]);
  },
};

/** Fills the empty tables it has a filler for; returns their names. */
export async function fillGaps(db: FixtureDb, ids: Record<string, string>): Promise<string[]> {
  const filled: string[] = [];
  for (const table of await db.tables()) {
    if ((await db.count(table)) > 0 || !fillers[table]) continue;
    await fillers[table](db, ids);
    filled.push(table);
  }
  return filled;
}
