// Prometheus metrics (prom-client), off unless METRICS_PORT or METRICS_TOKEN is set. The hot
// path only increments counters held in this process (a no-op while metrics are off); what the
// database knows (queue depth, lags, backlogs) is read by a few queries when a scrape comes.
// Metrics are per process, like the job runner: scrape every process.
import client from 'prom-client';
import { sql } from 'kysely';
import type { Db } from './db/database.ts';
import { poolStatsOf } from './db/database.ts';

interface Instruments {
  registry: client.Registry;
  httpRequests: client.Counter<'route' | 'method' | 'status'>;
  httpDuration: client.Histogram<'route' | 'method'>;
  accepted: client.Counter;
  deliveries: client.Counter<'outcome' | 'destination' | 'tls'>;
  feedback: client.Counter<'destination' | 'feedback'>;
  bounces: client.Counter<'kind'>;
  complaints: client.Counter;
}

let instruments: Instruments | null = null;
const databases = new Set<Db>();
/** notAfter of the certificate the SMTP listeners present, in Unix seconds (null: none loaded). */
let tlsCertificateExpiry: number | null = null;

/** Destinations worth a label of their own: the provider groups of traffic shaping; every other MX is `other`. */
export type DestinationLabel = string;

/** Turns metrics on for this process (idempotent) and reads gauges from `db` at scrape time. */
export function enableMetrics(db: Db): client.Registry {
  databases.add(db);
  if (instruments) return instruments.registry;
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'postlane_' });
  const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
    new client.Counter<L>({ name, help, labelNames, registers: [registry] });
  instruments = {
    registry,
    httpRequests: counter('postlane_http_requests_total', 'HTTP requests answered, by route pattern, method and status', [
      'route',
      'method',
      'status',
    ]),
    httpDuration: new client.Histogram({
      name: 'postlane_http_request_duration_seconds',
      help: 'HTTP request latency by route pattern',
      labelNames: ['route', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    accepted: counter('postlane_emails_accepted_total', 'Emails accepted for delivery (one per recipient), API, SMTP relay and forwards'),
    deliveries: counter(
      'postlane_deliveries_total',
      'Delivery attempts by outcome (delivered, deferred, bounced), destination provider group and TLS mode',
      ['outcome', 'destination', 'tls'],
    ),
    feedback: counter('postlane_delivery_feedback_total', 'Deferrals and blocks a destination answered with (throttled, blocked)', [
      'destination',
      'feedback',
    ]),
    bounces: counter('postlane_bounces_total', 'Bounces recorded: at delivery (5xx) or reported later (DSN)', ['kind']),
    complaints: counter('postlane_complaints_total', 'Complaints recorded (feedback loops)'),
  };
  const gauge = (name: string, help: string, labelNames: string[], collect: (g: client.Gauge<string>) => Promise<void>) =>
    new client.Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        await collect(this);
      },
    });
  gauge('postlane_jobs', 'Jobs in the queue by kind and state (due, scheduled, running, dead)', ['kind', 'state'], async (g) => {
    g.reset();
    for (const db of databases) for (const row of await jobStates(db)) g.inc({ kind: row.type, state: row.state }, Number(row.count));
  });
  gauge('postlane_job_lag_seconds', 'How long the oldest due, unclaimed job of each kind has waited', ['kind'], async (g) => {
    g.reset();
    const now = Date.now();
    for (const db of databases) {
      const rows = await db
        .selectFrom('jobs')
        .select(['type', (eb) => eb.fn.min('run_at').as('oldest')])
        .where('dead_at', 'is', null)
        .where('locked_by', 'is', null)
        .where('run_at', '<=', now)
        .groupBy('type')
        .execute();
      for (const row of rows) g.set({ kind: row.type }, Math.max(0, (now - Number(row.oldest)) / 1000));
    }
  });
  gauge('postlane_webhook_backlog', 'Webhook events not yet sent (outbox) and requests awaiting a retry', ['state'], async (g) => {
    g.reset();
    for (const db of databases) {
      const outbox = await db
        .selectFrom('webhook_outbox')
        .select((eb) => eb.fn.countAll().as('count'))
        .executeTakeFirst();
      const retrying = await db
        .selectFrom('webhook_requests')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('next_attempt_at', 'is not', null)
        .executeTakeFirst();
      g.inc({ state: 'outbox' }, Number(outbox?.count ?? 0));
      g.inc({ state: 'retrying' }, Number(retrying?.count ?? 0));
    }
  });
  gauge('postlane_webhook_lag_seconds', 'Age of the oldest webhook event not yet sent', [], async (g) => {
    let oldest: number | null = null;
    for (const db of databases) {
      const row = await db
        .selectFrom('webhook_outbox')
        .select((eb) => eb.fn.min('created_at').as('oldest'))
        .executeTakeFirst();
      const at = row?.oldest ? Date.parse(String(row.oldest)) : NaN;
      if (!Number.isNaN(at)) oldest = Math.min(oldest ?? at, at);
    }
    g.set(oldest === null ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
  });
  gauge(
    'postlane_db_pool_connections',
    'PostgreSQL pool connections by state (total, idle, waiting clients); absent on SQLite',
    ['state'],
    async (g) => {
      g.reset();
      for (const db of databases) {
        const stats = poolStatsOf(db);
        if (!stats) continue;
        g.inc({ state: 'total' }, stats.total);
        g.inc({ state: 'idle' }, stats.idle);
        g.inc({ state: 'waiting' }, stats.waiting);
      }
    },
  );
  gauge(
    'postlane_tls_certificate_expiry_seconds',
    'When the certificate the SMTP listeners present expires (Unix time, seconds); follows reloads',
    [],
    async (g) => {
      g.reset();
      if (tlsCertificateExpiry !== null) g.set(tlsCertificateExpiry);
    },
  );
  return registry;
}

/** The certificate now presented (at start and after each reload): kept even while metrics are off. */
export function recordTlsCertificateExpiry(notAfter: Date): void {
  tlsCertificateExpiry = Math.floor(notAfter.getTime() / 1000);
}

/** Stops reading gauges from `db` (its server closed). */
export function forgetMetricsDatabase(db: Db): void {
  databases.delete(db);
}

async function jobStates(db: Db) {
  const now = Date.now();
  const state = sql<string>`case when dead_at is not null then 'dead' when locked_until is not null and locked_until >= ${now} then 'running' when run_at <= ${now} then 'due' else 'scheduled' end`;
  // Grouped by position: the CASE carries parameters, which PostgreSQL would not match to a copy.
  return db
    .selectFrom('jobs')
    .select(['type', state.as('state'), (eb) => eb.fn.countAll().as('count')])
    .groupBy(['type', sql`2`])
    .execute();
}

export const metricsEnabled = () => instruments !== null;

export function observeHttp(route: string, method: string, status: number, seconds: number): void {
  if (!instruments) return;
  instruments.httpRequests.inc({ route, method, status: String(status) });
  instruments.httpDuration.observe({ route, method }, seconds);
}

export function observeAccepted(count: number): void {
  instruments?.accepted.inc(count);
}

/** One delivery try's outcome. `destination` is a provider group or `other` (bounded labels). */
export function observeDelivery(
  outcome: 'delivered' | 'deferred' | 'bounced',
  destination: string,
  tls: string | null | undefined,
  feedback: string,
): void {
  if (!instruments) return;
  instruments.deliveries.inc({ outcome, destination, tls: tls ?? 'none' });
  if (feedback === 'throttled' || feedback === 'blocked') instruments.feedback.inc({ destination, feedback });
  if (outcome === 'bounced') instruments.bounces.inc({ kind: 'at_delivery' });
}

export function observeBounce(): void {
  instruments?.bounces.inc({ kind: 'reported' });
}

export function observeComplaint(): void {
  instruments?.complaints.inc();
}
