// Traffic shaping against a receiver that throttles (docs/delivery.md): N single-recipient emails
// to one destination whose MX answers 421 4.7.0 to every recipient above LIMIT per second (a
// sliding one-second window, as rate-limiting receivers do). Postlane must learn the pace, deliver
// every message without a single permanent failure, and hold the rate the sink sees near the limit
// (aim: within 10 %). Measured at the sink: the rate over the steady part (from 2 s after the first
// acceptance to the last), the busiest and quietest whole seconds, and the 421s it gave; via the
// API, bounced or failed emails (must be 0).
import type { Scenario } from '../run.ts';
import { startPostlane } from '../lib.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { startSmtpSink } from '../../test/helpers/smtp-sink.ts';
import { runWarmup, warmupDescription } from '../shaping-warmup.ts';

const COUNT = Number(process.env.BENCH_SHAPING_COUNT ?? 10_000);
const LIMIT = Number(process.env.BENCH_SHAPING_LIMIT ?? 50);
/** BENCH_SHAPING_WARMUP: `only` runs just the warm-up part, `0` leaves it out. */
const WARMUP = process.env.BENCH_SHAPING_WARMUP ?? '1';
const TIMEOUT_MS = Number(process.env.BENCH_SHAPING_TIMEOUT_MS ?? Math.max(60_000, (COUNT / LIMIT) * 1000 * 2));

async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

export const scenario: Scenario = {
  name: 'shaping',
  description: `${COUNT.toLocaleString('en')} emails to a destination that throttles (421) above ${LIMIT}/s: no permanent failure, sink rate within 10 % of the limit; then ${warmupDescription}`,
  async run(options) {
    const throttled = WARMUP === 'only' ? [] : await runThrottled(options);
    const warmup = WARMUP === '0' ? [] : (await runWarmup()).map((line) => `warm-up: ${line}`);
    return { name: 'shaping', lines: [...throttled, ...warmup] };
  },
};

async function runThrottled({ connections }: { connections: number }): Promise<string[]> {
  const sink = await startSmtpSink({ rules: [], starttls: false, keepMessages: false, throttle: { perSecond: LIMIT } });
  const dns = await startDnsServer();
  dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  dns.set('mx.example.org', 'A', ['127.0.0.1']);
  const postlane = await startPostlane({ DNS_SERVERS: dns.address, MX_PORT: String(sink.port), MAIL_HOSTNAME: 'mail.bench.test' });
  try {
    const headers = { authorization: `Bearer ${postlane.key}`, 'content-type': 'application/json' };
    const workspace = JSON.parse(postlane.cli('workspace', 'list', '--json'))[0];
    postlane.cli('workspace', 'update', workspace.id, '--send-rate', '1000000', '--daily-limit', '1000000000', '--credits', '1000000000');
    const created = await (
      await fetch(`${postlane.url}/v2/domains`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench.test' }) })
    ).json();
    for (const record of created.dns_records as Array<{ type: string; name: string; value: string; priority: number | null }>) {
      if (record.type === 'MX') dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
      else if (record.type === 'CNAME') dns.set(record.name, 'CNAME', [record.value]);
      else dns.set(record.name, 'TXT', [record.value]);
    }
    const verified = await (await fetch(`${postlane.url}/v2/domains/${created.id}/verify`, { method: 'POST', headers })).json();
    if (!verified.verified_at) throw new Error(`domain not verified: ${JSON.stringify(verified)}`);

    const start = performance.now();
    await pool(COUNT, connections, async (i) => {
      const response = await fetch(`${postlane.url}/v2/emails`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ from: 'Bench <hello@bench.test>', to: `user${i}@example.org`, subject: `Shaping #${i}`, text: 'Hello' }),
      });
      if (response.status !== 200) throw new Error(`POST /v2/emails: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    });
    let timedOut = false;
    await sink.waitForMessages(COUNT, TIMEOUT_MS).catch(() => (timedOut = true));
    const totalS = (performance.now() - start) / 1000;

    const times = sink.acceptedAt;
    const first = times[0];
    const last = times[times.length - 1];
    const steadyFrom = first + 2000;
    const steady = times.filter((t) => t >= steadyFrom).length / Math.max(0.001, (last - steadyFrom) / 1000);
    const perSecond: number[] = [];
    for (let s = steadyFrom; s + 1000 <= last; s += 1000) perSecond.push(times.filter((t) => t >= s && t < s + 1000).length);
    const failed: number[] = [];
    for (const status of ['bounced', 'failed']) {
      const list = await (await fetch(`${postlane.url}/v2/emails?status.exact=${status}&limit=100`, { headers })).json();
      failed.push(list.data.length);
    }
    const destinations = await (await fetch(`${postlane.url}/v2/delivery/destinations`, { headers })).json();
    const state = destinations.data.find((d: { destination: string }) => d.destination === 'mx.example.org');
    const deviation = ((steady - LIMIT) / LIMIT) * 100;
    return [
      `delivered ${sink.accepted}/${COUNT} in ${totalS.toFixed(1)} s${timedOut ? ' (TIMED OUT)' : ''}; 421s given by the receiver: ${sink.refusals.filter((r) => r.code === 421).length}`,
      `permanent failures: bounced ${failed[0]}, failed ${failed[1]}`,
      `sink rate over the steady part: ${steady.toFixed(1)}/s for a limit of ${LIMIT}/s (${deviation >= 0 ? '+' : ''}${deviation.toFixed(1)} %, aim within ±10 %)`,
      `whole seconds: busiest ${Math.max(0, ...perSecond)}, quietest ${perSecond.length ? Math.min(...perSecond) : 0} (${perSecond.length} seconds): ${perSecond.join(' ')}`,
      `shaper (last snapshot): ${state ? `pace ${state.current_per_minute}/min, throttled ${state.throttled}, state ${state.state}` : 'not written yet'}`,
    ];
  } finally {
    await postlane.stop();
    await sink.close();
    await dns.close();
  }
}
