// Product events: custom events accepted per second through POST /v2/events/batch (100 a
// request) beside single-recipient POST /v2/emails in the same run on the same server (role
// api; aim: >= 5x the send rate in events), then trigger → first automation step latency for
// events sent one at a time to a server running its workers (role all; aim: p99 < 1 s).
import { join } from 'node:path';
import type { Scenario } from '../run.ts';
import { describeLoad, load, percentile, startPostlane } from '../lib.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { openDatabase } from '../../src/platform/db/database.ts';

const TRIGGERS = Number(process.env.BENCH_EVENTS_TRIGGERS ?? 500);
const TRIGGER_RATE = Number(process.env.BENCH_EVENTS_TRIGGER_RATE ?? 50);
const AIM_P99_MS = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const scenario: Scenario = {
  name: 'events',
  description: `POST /v2/events/batch (100 custom events a request) beside POST /v2/emails, then trigger → first automation step, on ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'} (aims: >= 5x the send rate in events; p99 < ${AIM_P99_MS} ms)`,
  async run({ seconds, connections }) {
    const dns = await startDnsServer();
    const lines: string[] = [];
    const api = await startPostlane({ DNS_SERVERS: dns.address }, 'api');
    try {
      const headers = { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' };
      const workspace = JSON.parse(api.cli('workspace', 'list', '--json'))[0];
      api.cli(
        'workspace',
        'update',
        workspace.id,
        '--plan',
        'pro',
        '--send-rate',
        '1000000',
        '--daily-limit',
        '1000000000',
        '--credits',
        '1000000000',
      );
      const created = await (
        await fetch(`${api.url}/v2/domains`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench.test' }) })
      ).json();
      for (const record of created.dns_records) {
        if (record.type === 'MX') dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
        else if (record.type === 'CNAME') dns.set(record.name, 'CNAME', [record.value]);
        else dns.set(record.name, 'TXT', [record.value]);
      }
      await fetch(`${api.url}/v2/domains/${created.id}/verify`, { method: 'POST', headers });

      const send = {
        url: `${api.url}/v2/emails`,
        body: JSON.stringify({
          from: 'Bench <hello@bench.test>',
          to: 'someone@example.org',
          subject: 'Benchmark',
          html: '<p>Hello</p>',
          text: 'Hello',
        }),
      };
      const events = Array.from({ length: 100 }, (_, i) => ({
        type: 'c:page.viewed',
        email: `visitor${i % 10}@example.org`,
        properties: { path: `/products/${i}`, price: i * 1.5, tags: ['a', 'b'] },
      }));
      const batch = { url: `${api.url}/v2/events/batch`, body: JSON.stringify({ events }) };
      await load(send.url, { seconds: 2, connections, headers, method: 'POST', body: send.body });
      await load(batch.url, { seconds: 2, connections, headers, method: 'POST', body: batch.body });
      const sends = await load(send.url, { seconds, connections, headers, method: 'POST', body: send.body });
      const batches = await load(batch.url, { seconds, connections, headers, method: 'POST', body: batch.body });
      const eventsPerSecond = batches.requestsPerSecond * 100;
      const ratio = eventsPerSecond / sends.requestsPerSecond;
      lines.push(
        describeLoad('postlane POST /v2/emails', sends),
        describeLoad('postlane POST /v2/events/batch', batches),
        `events accepted per second: ${eventsPerSecond.toFixed(0)}; emails accepted per second: ${sends.requestsPerSecond.toFixed(0)}; ratio ${ratio.toFixed(1)}x (aim >= 5x: ${ratio >= 5 ? 'met' : 'NOT met'})`,
      );
    } finally {
      await api.stop();
    }

    const all = await startPostlane({ DNS_SERVERS: dns.address }, 'all');
    const handle = openDatabase(all.env.DATABASE_URL ?? `sqlite:${join(all.env.DATA_DIR, 'postlane.db')}`);
    try {
      const headers = { authorization: `Bearer ${all.key}`, 'content-type': 'application/json' };
      const workspace = JSON.parse(all.cli('workspace', 'list', '--json'))[0];
      all.cli('workspace', 'update', workspace.id, '--plan', 'pro', '--credits', '1000000000');
      const call = async (path: string, body: unknown) => {
        const response = await fetch(`${all.url}/v2${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
        const json = (await response.json()) as any;
        if (response.status >= 300) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(json)}`);
        return json;
      };
      const made = await call('/automations', {
        context: 'event',
        name: 'On order',
        steps: [
          {
            key: 'ordered',
            type: 'trigger',
            trigger: 'event.c:order.completed',
            config: { filter: { rules: [{ field: 'properties.total', operator: 'greater_than', value: 10 }] } },
          },
          {
            key: 'check',
            type: 'action',
            action: 'condition',
            config: { filter: { rules: [{ field: 'properties.total', operator: 'is_set' }] } },
          },
          { key: 'done', type: 'action', action: 'end' },
        ],
        connections: [
          { from: 'ordered', to: 'check' },
          { from: 'check', to: 'done', branch: 'yes' },
          { from: 'check', to: 'done', branch: 'no' },
        ],
      });
      const automationId = made.data.id;
      await call(`/automations/${automationId}/start`, {});
      const started = performance.now();
      for (let i = 0; i < TRIGGERS; i++) {
        const due = started + (i * 1000) / TRIGGER_RATE;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        void call('/events', {
          type: 'c:order.completed',
          email: `buyer${i}@example.org`,
          properties: { order_id: String(i), total: 20 + i },
        });
      }
      const db = handle.db;
      const deadline = Date.now() + 60_000;
      let steps: Array<{ run_id: string; started_at: string | null }> = [];
      while (Date.now() < deadline) {
        steps = await db
          .selectFrom('automation_run_steps')
          .select(['run_id', 'started_at'])
          .where('automation_id', '=', automationId)
          .where('step_key', '=', 'check')
          .execute();
        if (steps.length >= TRIGGERS) break;
        await sleep(200);
      }
      const runs = await db
        .selectFrom('automation_runs as r')
        .innerJoin('events as e', 'e.id', 'r.event_id')
        .select(['r.id', 'e.created_at as event_at'])
        .where('r.automation_id', '=', automationId)
        .execute();
      const firstStep = new Map(steps.map((s) => [s.run_id, Date.parse(s.started_at!)]));
      const latencies = runs.map((r) => (firstStep.get(r.id) ?? NaN) - Date.parse(r.event_at)).filter((v) => Number.isFinite(v));
      const p99 = percentile(latencies, 99);
      lines.push(
        `trigger → first step (${latencies.length} of ${TRIGGERS} events at ${TRIGGER_RATE}/s)   p50 ${percentile(latencies, 50)} ms   p99 ${p99} ms   (aim p99 < ${AIM_P99_MS} ms: ${p99 < AIM_P99_MS ? 'met' : 'NOT met'})`,
      );
    } finally {
      await handle.close();
      await all.stop();
      await dns.close();
    }
    return { name: this.name, lines };
  },
};
