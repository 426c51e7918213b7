// The background verification of a list: one durable job per list. Each run verifies pending
// addresses in `full` mode for a few seconds, recording results as it goes (a result is written
// only over a `pending` row, so an address is verified once), then asks to run again; the run
// that finds nothing left completes the list. A worker that dies mid-run loses only the checks
// in flight: its lease runs out and the next run resumes with what is still pending.
//
// Politeness: at most MAX_CONNECTIONS_PER_MX checks run at once per mail host (addresses are
// grouped by their domain's preferred MX, so domains hosted together share the allowance), the
// process-wide limiter caps connections per MX address across all lists, and groups take turns.
import type { Resolver } from 'node:dns/promises';
import type { AppContext } from '../../platform/context.ts';
import type { Db } from '../../platform/db/database.ts';
import { createResolver } from '../../platform/dns.ts';
import { RetryJobAt, type Job } from '../../platform/jobs.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { parseAddress } from '../../mail/address-checks.ts';
import { ADDRESSES_PER_SESSION, MAX_CONNECTIONS_PER_MX } from '../../mail/mailbox-probe.ts';
import { DomainFactsCache, verifyAddresses, type VerificationOutcome } from '../email-verifications/index.ts';
import { outcomeColumns } from '../email-verifications/service.ts';
import { completeList, pendingCount } from './service.ts';

/** How long one run starts new checks before handing over (the job runs again at once). */
export const RUN_BUDGET_MS = 5_000;
/** SMTP sessions (each checking up to ADDRESSES_PER_SESSION addresses of a domain) in flight per list run. */
export const LIST_CONCURRENCY = 48;
// Addresses read per query: enough that a domain's addresses fill whole sessions.
const BATCH = 5_000;
const FLUSH_SIZE = 100;
const FLUSH_INTERVAL_MS = 250;
/** A run that failed (the database away, say) is retried after this long, never given up. */
const RETRY_AFTER_ERROR_MS = 10_000;

interface PendingAddress {
  id: string;
  email: string;
  position: number;
}

/** Results written in small transactions as they come, one write at a time. */
class ResultWriter {
  private buffer: Array<{ id: string; outcome: VerificationOutcome }> = [];
  private lastFlush = Date.now();
  private writing: Promise<void> = Promise.resolve();
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  add(id: string, outcome: VerificationOutcome): void {
    this.buffer.push({ id, outcome });
    if (this.buffer.length >= FLUSH_SIZE || Date.now() - this.lastFlush >= FLUSH_INTERVAL_MS) void this.flush().catch(() => undefined);
  }

  flush(): Promise<void> {
    const batch = this.buffer.splice(0);
    this.lastFlush = Date.now();
    this.writing = this.writing.then(() => (batch.length === 0 ? undefined : this.write(batch)));
    return this.writing;
  }

  private async write(batch: Array<{ id: string; outcome: VerificationOutcome }>): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const now = nowIso();
      for (const { id, outcome } of batch) {
        await tx
          .updateTable('email_verifications')
          .set(outcomeColumns(outcome, now))
          .where('id', '=', id)
          .where('status', '=', 'pending')
          .execute();
      }
    });
  }
}

export class ListVerifier {
  private readonly ctx: AppContext;
  private readonly resolver: Resolver;
  constructor(ctx: AppContext) {
    this.ctx = ctx;
    this.resolver = createResolver(ctx.config.dnsServers, { timeoutMs: ctx.config.dnsTimeoutMs });
  }

  async run(job: Job<{ list_id: string }>): Promise<void> {
    try {
      await this.runOnce(job.payload.list_id);
    } catch (error) {
      if (error instanceof RetryJobAt) throw error;
      this.ctx.log.error({ err: error, listId: job.payload.list_id }, 'verifying a list failed; retrying');
      throw new RetryJobAt(nowMs() + RETRY_AFTER_ERROR_MS, `verification run failed: ${(error as Error).message}`);
    }
  }

  private async runOnce(listId: string): Promise<void> {
    const { db } = this.ctx;
    const list = await db.selectFrom('email_verification_lists').select('status').where('id', '=', listId).executeTakeFirst();
    if (!list || list.status !== 'processing') return;
    const deadline = Date.now() + RUN_BUDGET_MS;
    const facts = new DomainFactsCache();
    const writer = new ResultWriter(db);
    try {
      for (let after = -1; Date.now() < deadline; ) {
        const rows = await db
          .selectFrom('email_verifications')
          .select(['id', 'email', 'position'])
          .where('list_id', '=', listId)
          .where('status', '=', 'pending')
          .where('position', '>', after)
          .orderBy('position')
          .limit(BATCH)
          .execute();
        if (rows.length === 0) break;
        after = rows[rows.length - 1].position!;
        await this.verifyBatch(rows as PendingAddress[], facts, writer, deadline);
      }
    } finally {
      await writer.flush();
    }
    const left = await pendingCount(db, listId);
    if (left > 0) throw new RetryJobAt(nowMs(), `continuing: ${left} addresses left`);
    await completeList(db, listId);
  }

  /** Verifies a batch, mail hosts taking turns, until done or the deadline (then what is in flight finishes). */
  private async verifyBatch(rows: PendingAddress[], facts: DomainFactsCache, writer: ResultWriter, deadline: number): Promise<void> {
    const deps = { config: this.ctx.config, resolver: this.resolver, facts };
    const groups = await this.groupByMailHost(rows, facts);
    const keys = [...groups.keys()];
    const inFlight = new Map<string, number>();
    const running = new Set<Promise<void>>();
    let turn = 0;
    const nextChunk = (): [string, PendingAddress[]] | null => {
      for (let i = 0; i < keys.length; i++) {
        const key = keys[(turn + i) % keys.length];
        const queue = groups.get(key)!;
        if (queue.length > 0 && (inFlight.get(key) ?? 0) < MAX_CONNECTIONS_PER_MX) {
          turn = (turn + i + 1) % keys.length;
          return [key, queue.shift()!];
        }
      }
      return null;
    };
    for (;;) {
      while (running.size < LIST_CONCURRENCY && Date.now() < deadline) {
        const next = nextChunk();
        if (!next) break;
        const [key, chunk] = next;
        inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
        const task = verifyAddresses(
          chunk.map((row) => row.email),
          'full',
          deps,
        )
          .then((outcomes) => outcomes.forEach((outcome, i) => writer.add(chunk[i].id, outcome)))
          .finally(() => {
            inFlight.set(key, inFlight.get(key)! - 1);
            running.delete(task);
          });
        running.add(task);
      }
      if (running.size === 0) return;
      await Promise.race(running);
    }
  }

  /** Addresses by the mail host they will be checked at (the domain's preferred MX), or by domain, in session-sized chunks. */
  private async groupByMailHost(rows: PendingAddress[], facts: DomainFactsCache): Promise<Map<string, PendingAddress[][]>> {
    const deps = { config: this.ctx.config, resolver: this.resolver, facts };
    const domains = [...new Set(rows.map((row) => parseAddress(row.email)?.domain).filter((d): d is string => d !== undefined))];
    // Domain facts (MX, RDAP) are looked up a few domains at a time, then cached for the run.
    const hostOf = new Map<string, string>();
    for (let i = 0; i < domains.length; i += 16) {
      await Promise.all(
        domains.slice(i, i + 16).map(async (domain) => {
          const found = await facts.get(domain, deps);
          hostOf.set(domain, found.mx.kind === 'records' ? `mx:${found.mx.records[0].exchange}` : `domain:${domain}`);
        }),
      );
    }
    // Per mail host, the addresses in chunks of one domain (one SMTP session each), the
    // domains of a host taking turns.
    const byHost = new Map<string, Map<string, PendingAddress[]>>();
    for (const row of rows) {
      const domain = parseAddress(row.email)?.domain ?? '';
      const key = domain ? hostOf.get(domain)! : 'invalid';
      let domains = byHost.get(key);
      if (!domains) byHost.set(key, (domains = new Map()));
      let list = domains.get(domain);
      if (!list) domains.set(domain, (list = []));
      list.push(row);
    }
    const groups = new Map<string, PendingAddress[][]>();
    for (const [key, domains] of byHost) {
      const chunked = [...domains.values()].map((list) => {
        const chunks: PendingAddress[][] = [];
        for (let i = 0; i < list.length; i += ADDRESSES_PER_SESSION) chunks.push(list.slice(i, i + ADDRESSES_PER_SESSION));
        return chunks;
      });
      const interleaved: PendingAddress[][] = [];
      for (let i = 0; chunked.some((chunks) => i < chunks.length); i++)
        for (const chunks of chunked) if (i < chunks.length) interleaved.push(chunks[i]);
      groups.set(key, interleaved);
    }
    return groups;
  }
}
