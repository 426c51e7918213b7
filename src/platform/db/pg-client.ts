// How a pooled PostgreSQL connection sends queries: three changes to node-postgres's client.
//
// Named prepared statements. node-postgres sends every unnamed query as Parse + Bind +
// Execute, so PostgreSQL parses and plans it on every call. Statements compiled once
// (prepared.ts) are given a name here; a pooled connection then parses each of them once, and
// later calls send only Bind + Execute. Only statements registered here are named, and at most
// MAX_NAMED of them, because each connection keeps every statement it prepared.
//
// Deferred statements. A transaction's BEGIN (or a group unit's SAVEPOINT) answers nothing the
// caller needs, yet awaiting it costs a round trip through both event loops before the first
// real statement can go (measured on the send path: 3-12 ms under load, as much as the send's
// own statements). `deferred(text)` answers at once, and `text` goes out right before the
// connection's next query, without waiting for its answer (the driver's pipeline mode); that
// query then fails with the deferred statement's error, if it had one.
//
// Pipelined writes. A write whose answer the caller does not need (a send's rows, when no
// reaction reads anything back) is deferred the same way, with its values: on a send's own
// transaction it goes out with the COMMIT, one round trip fewer per send. Measured on the send
// path under load, PostgreSQL's sessions spent most of their time idle in transaction, waiting
// for the next statement from a busy event loop. A pipelined write that fails makes the query
// it went out with fail with its error, marked (isPipelinedWriteFailure), so that a group of
// units can tell the failure came from an earlier unit's statement.
import type pg from 'pg';

const MAX_NAMED = 400;
const names = new Map<string, string>();
const DEFERRED = '/* deferred */ ';
const PIPELINED = '/* pipelined */ ';

/** Marks `sql` as a statement to prepare once per connection. */
export function nameStatement(sql: string): void {
  if (names.size < MAX_NAMED && !names.has(sql)) names.set(sql, `pl_${names.size}`);
}

/** The text of a statement to send with the connection's next query (see above). */
export function deferred(statement: string): string {
  return DEFERRED + statement;
}

/** The text of a write (with its values) to send with the connection's next query. */
export function pipelinedWrite(statement: string): string {
  return PIPELINED + statement;
}

const FAILED_WRITE = Symbol('pipelined write failed');

const isDatabaseError = (error: unknown): error is object =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' && 'severity' in error;

/** Whether `error` is that of a pipelined write, reported by the query it went out with. */
export function isPipelinedWriteFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && FAILED_WRITE in error;
}

type Callback = (error: Error | null, result: unknown) => void;
type Query = (config: unknown, values?: unknown, callback?: Callback) => unknown;
const NOTHING = { command: null, rowCount: null, rows: [], fields: [] };

/** Makes `client` send registered statements as named prepared statements, deferred ones with
 *  the query after them, and answer through the callback form. The pool must create its
 *  clients with `pipeline: true`. */
export function adaptPgClient(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query;
  // The driver's callback form, with a promise of our own. With the driver's promise form,
  // finished queries (their rows, fields and messages) outlived young-generation collections
  // and were promoted: about 10 % of all a request allocated, so the old generation filled with
  // garbage and a full collection, a 20-40 ms stall, came every second or two under load.
  // Measured with --trace-gc-nvp at 500 req/s: a GET of an API key promoted 300 kB per
  // scavenge before, 2 kB after.
  const run = (text: unknown, values: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const name = typeof text === 'string' && Array.isArray(values) ? names.get(text) : undefined;
      const done: Callback = (error, result) => (error ? reject(error) : resolve(result));
      if (name) query({ name, text, values }, done);
      else if (values === undefined) query(text, done);
      else query(text, values, done);
    });
  let waiting: Array<{ text: string; values?: unknown; write: boolean }> = [];
  (client as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    if (typeof callback === 'function' || typeof values === 'function' || (typeof text === 'object' && text !== null && 'submit' in text)) {
      return query(text, values, callback as Callback); // the driver's own forms (pg-pool's checks)
    }
    if (typeof text === 'string' && text.startsWith(DEFERRED)) {
      waiting.push({ text: text.slice(DEFERRED.length), write: false });
      return Promise.resolve(NOTHING);
    }
    if (typeof text === 'string' && text.startsWith(PIPELINED)) {
      waiting.push({ text: text.slice(PIPELINED.length), values, write: true });
      return Promise.resolve(NOTHING);
    }
    if (waiting.length === 0) return run(text, values);
    // Corked: all go out in one write (pipeline mode submits each query at once).
    const stream = (client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
    stream.cork();
    const before = waiting.map((item) =>
      run(item.text, item.values).catch((error: unknown) => {
        // Only PostgreSQL's own answer (an error with a SQLSTATE): the transaction is then
        // aborted and nothing of it can commit. A lost connection says nothing of that.
        if (item.write && isDatabaseError(error)) Object.assign(error, { [FAILED_WRITE]: true });
        throw error;
      }),
    );
    waiting = [];
    const result = run(text, values);
    stream.uncork();
    // All are on the wire; the caller waits for all, and hears the first failure.
    return Promise.all(before).then(
      () => result,
      (error: unknown) => {
        result.catch(() => {});
        throw error;
      },
    );
  };
}
