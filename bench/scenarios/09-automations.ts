// Automations at volume (docs/performance.md, "automations"): N contacts (default 10,000) added to
// an audience over the API, each firing a 4-step automation (condition → send_email → wait 0 s →
// end) in one Postlane child process (role all; SQLite, or PostgreSQL with BENCH_DATABASE_URL
// naming an empty database), delivering to a local SMTP sink through a loopback DNS server.
// Reported: trigger-to-first-step latency p50 and p99 (from the subscriber.created event to the
// run's first step starting; aim p99 < 2 s — Mautic runs its triggers from cron every minute),
// steps per second (first event to last step completed), runs completed and steps visited exactly
// once, emails created and emails at the sink.
import { join } from 'node:path';
import type { Scenario } from '../run.ts';
import { percentile, startPostlane } from '../lib.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { startSmtpSink } from '../../test/helpers/smtp-sink.ts';
import { openDatabase } from '../../src/platform/db/database.ts';

const COUNT = Number(process.env.BENCH_AUTOMATIONS_CONTACTS ?? 10_000);
const CLIENTS = Number(process.env.BENCH_AUTOMATIONS_CLIENTS ?? 20);
const TIMEOUT_MS = Number(process.env.BENCH_AUTOMATIONS_TIMEOUT_MS ?? 600_000);
const AIM_P99_MS = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const scenario: Scenario = {
  name: 'automations',
  description: `${COUNT.toLocaleString('en')} contacts added to an audience, each running condition → send_email → wait 0 s → end (aim: trigger-to-first-step p99 < ${AIM_P99_MS} ms)`,
  async run() {
    const sink = await startSmtpSink({ rules: [], starttls: false, keepMessages: false });
    const dns = await startDnsServer();
    dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
    dns.set('mx.example.org', 'A', ['127.0.0.1']);
    const postlane = await startPostlane({ DNS_SERVERS: dns.address, MX_PORT: String(sink.port), MAIL_HOSTNAME: 'mail.bench.test' });
    const kind = process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite';
    // The server's own database: on PostgreSQL a fresh schema of BENCH_DATABASE_URL (search_path pinned).
    const handle = openDatabase(postlane.env.DATABASE_URL ?? `sqlite:${join(postlane.env.DATA_DIR, 'postlane.db')}`);
    try {
      const headers = { authorization: `Bearer ${postlane.key}`, 'content-type': 'application/json' };
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${postlane.url}/v2${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const json = (await response.json()) as any;
        if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
        return json;
      };
      const workspace = JSON.parse(postlane.cli('workspace', 'list', '--json'))[0];
      postlane.cli('workspace', 'update', workspace.id, '--send-rate', '1000000', '--daily-limit', '1000000000', '--credits', '1000000000');
      const domain = await call('POST', '/domains', { name: 'bench.test' });
      for (const record of domain.dns_records) {
        if (record.type === 'MX') dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
        else if (record.type === 'CNAME') dns.set(record.name, 'CNAME', [record.value]);
        else dns.set(record.name, 'TXT', [record.value]);
      }
      await call('POST', `/domains/${domain.id}/verify`);
      await call('POST', '/templates', {
        name: 'Welcome',
        alias: 'welcome',
        from: 'hello@bench.test',
        subject: 'Welcome {{first_name}}',
        text: 'Hello {{first_name}}',
      });
      const audience = await call('POST', '/audiences', { name: 'Bench' });
      const automation = (
        await call('POST', '/automations', {
          context: 'contact',
          name: 'Bench welcome',
          steps: [
            { key: 'joined', type: 'trigger', trigger: 'contact.added_to_audience', config: { audience_id: audience.id } },
            {
              key: 'check',
              type: 'action',
              action: 'condition',
              config: { filter: { rules: [{ field: 'first_name', operator: 'is_set' }] } },
            },
            { key: 'mail', type: 'action', action: 'send_email', config: { type: 'template', template_id: 'welcome' } },
            { key: 'pause', type: 'action', action: 'wait', config: { seconds: 0 } },
            { key: 'done', type: 'action', action: 'end' },
          ],
          connections: [
            { from: 'joined', to: 'check' },
            { from: 'check', to: 'mail', branch: 'yes' },
            { from: 'mail', to: 'pause' },
            { from: 'pause', to: 'done' },
          ],
        })
      ).data;
      await call('POST', `/automations/${automation.id}/start`);

      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (next < COUNT) {
            const i = next++;
            await call('POST', '/contacts', { email: `person${i}@example.org`, first_name: `P${i}`, audiences: [audience.id] });
          }
        }),
      );
      const addedMs = performance.now() - started;

      const db = handle.db;
      const deadline = Date.now() + TIMEOUT_MS;
      for (;;) {
        const [{ n }] = await db
          .selectFrom('automation_runs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('automation_id', '=', automation.id)
          .where('status', '=', 'completed')
          .execute();
        if (Number(n) >= COUNT || Date.now() > deadline) break;
        await sleep(250);
      }
      const runsDoneMs = performance.now() - started;
      while (sink.accepted < COUNT && Date.now() < deadline) await sleep(100);
      const sinkMs = performance.now() - started;

      const runs = await db
        .selectFrom('automation_runs as r')
        .innerJoin('events as e', 'e.id', 'r.event_id')
        .select(['r.id', 'r.status', 'e.created_at as event_at'])
        .where('r.automation_id', '=', automation.id)
        .execute();
      const steps = await db
        .selectFrom('automation_run_steps')
        .select(['run_id', 'step_key', 'status', 'started_at', 'completed_at'])
        .where('automation_id', '=', automation.id)
        .execute();
      const firstStep = new Map<string, number>();
      let firstEvent = Infinity;
      let lastStep = 0;
      for (const s of steps) {
        const at = Date.parse(s.started_at!);
        if (s.step_key === 'check') firstStep.set(s.run_id, at);
        if (s.completed_at) lastStep = Math.max(lastStep, Date.parse(s.completed_at));
      }
      const latencies = runs
        .map((r) => {
          const eventAt = Date.parse(r.event_at);
          firstEvent = Math.min(firstEvent, eventAt);
          return (firstStep.get(r.id) ?? NaN) - eventAt;
        })
        .filter((n) => Number.isFinite(n));
      const visits = new Set(steps.map((s) => `${s.run_id}/${s.step_key}`));
      const [{ n: emails }] = await db
        .selectFrom('emails')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .execute();
      const completedSteps = steps.filter((s) => s.status === 'completed').length;
      const stepSeconds = (lastStep - firstEvent) / 1000;
      const p99 = percentile(latencies, 99);
      return {
        name: 'automations',
        lines: [
          `database ${kind}; ${COUNT} contacts added by ${CLIENTS} API clients in ${(addedMs / 1000).toFixed(1)} s (${(COUNT / (addedMs / 1000)).toFixed(0)}/s)`,
          `trigger → first step       p50 ${percentile(latencies, 50)} ms   p99 ${p99} ms   (aim p99 < ${AIM_P99_MS} ms: ${p99 < AIM_P99_MS ? 'met' : 'NOT met'})`,
          `steps                      ${completedSteps} completed in ${stepSeconds.toFixed(1)} s = ${(completedSteps / stepSeconds).toFixed(0)} steps/s`,
          `runs                       ${runs.length} started, ${runs.filter((r) => r.status === 'completed').length} completed in ${(runsDoneMs / 1000).toFixed(1)} s; ${steps.length} step visits, ${visits.size} distinct (run, step) (expected ${COUNT * 4}, exactly once: ${steps.length === visits.size && steps.length === COUNT * 4 ? 'yes' : 'NO'})`,
          `emails                     ${emails} created, ${sink.accepted} at the sink after ${(sinkMs / 1000).toFixed(1)} s`,
        ],
      };
    } catch (error) {
      throw new Error(`${(error as Error).message}\npostlane output:\n${postlane.output().slice(-4000)}`);
    } finally {
      await handle.close();
      await postlane.stop();
      await sink.close();
      await dns.close();
    }
  },
};
