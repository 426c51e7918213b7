// /metrics as Prometheus scrapes it: off by default, on its own port or behind a token on the
// API port, and exact for a known workload (N sends → N accepted, N delivered).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiClient, eventually, freePort, startTestApp, usingPostgres } from '../helpers/app.ts';
import { startSendingApp } from '../helpers/sending.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format (version 0.0.4): `# HELP`/`# TYPE` lines and samples. */
function parseMetrics(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) types.set(type[1], type[2]);
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    assert.ok(match, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]] = pair[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    const value = match[3] === '+Inf' ? Infinity : match[3] === '-Inf' ? -Infinity : Number(match[3]);
    assert.ok(!Number.isNaN(value) || /^nan$/i.test(match[3]), `a number: ${line}`); // Go's ParseFloat, as Prometheus reads it: NaN in any case
    samples.push({ name: match[1], labels, value });
  }
  return { samples, types };
}

const sum = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);

test('metrics are off by default: no /metrics on the API port', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  assert.equal((await apiClient(app.url, null).get('/metrics')).status, 404);
});

test('/metrics counts a known workload exactly, on its own port and behind the token on the API port', async (t) => {
  const sink = await startSmtpSink();
  const metricsPort = await freePort();
  const app = await startSendingApp({
    env: { METRICS_PORT: String(metricsPort), METRICS_TOKEN: 'metrics-secret', MX_PORT: String(sink.port) },
  });
  t.after(async () => {
    await app.close();
    await sink.close();
  });
  await app.verifiedDomain('acme.test');
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1000 });
  app.dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  app.dns.set('mx.example.org', 'A', ['127.0.0.1']);

  const scrape = async () => {
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
    return parseMetrics(await response.text());
  };
  const before = await scrape();
  const N = 5;
  for (let i = 0; i < N; i++) {
    const sent = await app.api.post('/v2/emails', {
      from: 'hello@acme.test',
      to: `user${i}@example.org`,
      subject: `Hello ${i}`,
      text: 'Hi',
    });
    assert.equal(sent.status, 200, sent.text);
  }
  await sink.waitForMessages(N, 20_000);
  const after = await eventually(async () => {
    const scraped = await scrape();
    const delivered =
      sum(scraped.samples, 'postlane_deliveries_total', { outcome: 'delivered' }) -
      sum(before.samples, 'postlane_deliveries_total', { outcome: 'delivered' });
    return delivered >= N ? scraped : null;
  });
  const delta = (name: string, labels: Record<string, string> = {}) => sum(after.samples, name, labels) - sum(before.samples, name, labels);
  assert.equal(delta('postlane_emails_accepted_total'), N, 'N accepted');
  assert.equal(delta('postlane_deliveries_total', { outcome: 'delivered', destination: 'other' }), N, 'N delivered');
  assert.equal(delta('postlane_deliveries_total', { outcome: 'bounced' }), 0);
  assert.equal(
    delta('postlane_http_requests_total', { route: '/v2/emails', method: 'POST', status: '200' }),
    N,
    'N requests by route and status',
  );
  assert.equal(delta('postlane_http_request_duration_seconds_count', { route: '/v2/emails', method: 'POST' }), N, 'their latencies');
  assert.equal(after.types.get('postlane_http_request_duration_seconds'), 'histogram');
  assert.equal(after.types.get('postlane_jobs'), 'gauge');
  const queued = after.samples.filter((s) => s.name === 'postlane_jobs' && s.labels.kind === 'email.deliver');
  assert.ok(
    queued.every((s) => ['due', 'scheduled', 'running', 'dead'].includes(s.labels.state)),
    JSON.stringify(queued),
  );
  await eventually(async () => sum((await scrape()).samples, 'postlane_jobs', { kind: 'email.deliver' }) === 0, 10_000, 200);
  assert.ok(
    after.samples.some((s) => s.name === 'postlane_process_resident_memory_bytes'),
    'default process metrics',
  );
  assert.ok(
    after.samples.some((s) => s.name === 'postlane_nodejs_eventloop_lag_p99_seconds'),
    'event-loop delay',
  );
  assert.ok(after.types.has('postlane_webhook_backlog') && after.types.has('postlane_job_lag_seconds'));
  if (usingPostgres) assert.ok(sum(after.samples, 'postlane_db_pool_connections', { state: 'total' }) >= 1, 'the PostgreSQL pool in use');

  // The Grafana dashboard in deploy/ charts only metrics the server exposes.
  const dashboard = readFileSync(join(import.meta.dirname, '..', '..', 'deploy', 'grafana', 'postlane.json'), 'utf8');
  const charted = new Set([...dashboard.matchAll(/postlane_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, '')));
  const exposed = new Set(after.samples.map((s) => s.name).concat([...after.types.keys()]));
  assert.deepEqual(
    [...charted].filter((name) => !exposed.has(name) && name !== 'postlane_db_pool_connections'),
    [],
    'every charted metric is exposed',
  );

  // On the API port: only with the token.
  const anonymous = await fetch(`${app.url}/metrics`);
  assert.equal(anonymous.status, 401);
  const wrong = await fetch(`${app.url}/metrics`, { headers: { authorization: 'Bearer nope' } });
  assert.equal(wrong.status, 401);
  const right = await fetch(`${app.url}/metrics`, { headers: { authorization: 'Bearer metrics-secret' } });
  assert.equal(right.status, 200);
  assert.ok(parseMetrics(await right.text()).types.has('postlane_deliveries_total'));
});
