// Automations survive restarts and crashes: a 30-day wait across a restart of the server (on
// the clock seam), and the server killed with SIGKILL several times while 1,000 runs are in
// flight, after which every run completed with each step once and each email sent once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { apiClient, databaseUrlOf, eventually, freePort, freshDatabase, startChildApp, testConfig, type ChildApp } from '../helpers/app.ts';
import { startDeliveryApp } from '../emails/delivery/helpers.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import { startPostlane } from '../../src/server.ts';
import { createWorkspace, updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { resetClock, shiftClock } from '../../src/platform/clock.ts';
import { DELIVER_LEASE_MS } from '../../src/resources/emails/service.ts';
import { allRuns, manualGraph, startedAutomation } from './helpers.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a 30-day wait survives a restart of the server and ends on time', { timeout: 120_000 }, async () => {
  const hooks = await startWebhookReceiver();
  const database = await freshDatabase();
  const config = testConfig(database, { ALLOW_PRIVATE_URLS: 'true' });
  const start = () =>
    startPostlane(config, { roles: ['api', 'worker'], schema: database.schema, logger: pino({ level: 'silent' }), jobPollMs: 50 });
  let running = await start();
  try {
    const { apiKey } = await createWorkspace(running.ctx.db, { name: 'restart', plan: 'pro', credits: 100, verified: true });
    let api = apiClient(running.url!, apiKey);
    const automation = await startedAutomation(
      api,
      manualGraph(
        [
          { key: 'month', type: 'action', action: 'wait', config: { seconds: 2_592_000 } },
          { key: 'ping', type: 'action', action: 'call_webhook', config: { url: `${hooks.url}/month/{{run.id}}` } },
        ],
        [{ from: 'month', to: 'ping' }],
      ),
    );
    const run = (await api.post(`/v2/automations/${automation.id}/trigger`, {})).body.data;
    await eventually(
      async () => (await api.get(`/v2/automations/${automation.id}/runs/${run.id}`)).body.data.run_steps[0]?.status === 'waiting',
    );
    await running.close();

    // 29 days later the server starts again: the wait holds.
    shiftClock(29 * 86_400_000);
    running = await start();
    api = apiClient(running.url!, apiKey);
    await sleep(1000);
    assert.equal(hooks.requests.length, 0);
    assert.equal((await api.get(`/v2/automations/${automation.id}/runs/${run.id}`)).body.data.status, 'running');

    // A day and a second later it has ended, once.
    shiftClock(86_400_000 + 1000);
    const done = await eventually(async () => {
      const current = (await api.get(`/v2/automations/${automation.id}/runs/${run.id}`)).body.data;
      return current.status === 'completed' && current;
    }, 10_000);
    assert.deepEqual(
      done.run_steps.map((s: any) => [s.step_key, s.status]),
      [
        ['month', 'completed'],
        ['ping', 'completed'],
      ],
    );
    assert.deepEqual(done.run_steps[0].data, { status: 'completed', delayMs: 2_592_000_000, seconds: 2_592_000 });
    assert.deepEqual(
      hooks.requests.map((r) => r.path),
      [`/month/${run.id}`],
    );
  } finally {
    resetClock();
    await running.close();
    await database.drop();
    await hooks.close();
  }
});

test('SIGKILL several times while 1,000 runs are in flight: every run completes, each step once, each email once', {
  timeout: 400_000,
}, async (t) => {
  const RUNS = Number(process.env.AUTOMATION_CRASH_RUNS ?? 1000);
  // This process takes the triggers (API only); the worker under fire is a child process.
  const app = await startDeliveryApp({ roles: ['api'], workspace: { credits: 10_000_000 } });
  let child: ChildApp | null = null;
  try {
    await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 100_000, dailyLimit: 10_000_000 });
    await app.api.post('/v2/templates', {
      name: 'Crash',
      alias: 'crash',
      from: 'hello@acme.test',
      subject: 'Run {{payload.n}}',
      text: 'Hello {{payload.n}}',
    });
    const automation = await startedAutomation(
      app.api,
      manualGraph(
        [
          {
            key: 'check',
            type: 'action',
            action: 'condition',
            config: { filter: { rules: [{ field: 'payload.n', operator: 'is_set' }] } },
          },
          { key: 'mail', type: 'action', action: 'send_email', config: { type: 'template', template_id: 'crash', to: '{{payload.to}}' } },
          { key: 'pause', type: 'action', action: 'wait', config: { seconds: 1 } },
          { key: 'done', type: 'action', action: 'end' },
        ],
        [
          { from: 'check', to: 'mail', branch: 'yes' },
          { from: 'mail', to: 'pause' },
          { from: 'pause', to: 'done' },
        ],
      ),
    );
    const env = {
      DATABASE_URL: await databaseUrlOf(app),
      DATA_DIR: app.config.dataDir,
      HTTP_HOST: '127.0.0.1',
      SMTP_SUBMISSION_PORT: '0',
      SMTP_INBOUND_PORT: '0',
      DNS_SERVERS: app.dns.address,
      MX_PORT: String(app.sink.port),
      MAIL_HOSTNAME: 'mail.postlane.test',
      ALLOW_PRIVATE_URLS: 'true',
    };
    child = await startChildApp({ ...env, HTTP_PORT: String(await freePort()) });

    let triggered = 0;
    const trigger = (async () => {
      for (let i = 0; i < RUNS; i += 25) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(25, RUNS - i) }, (_, j) =>
            app.api.post(`/v2/automations/${automation.id}/trigger`, { payload: { n: i + j, to: `r${i + j}@example.org` } }),
          ),
        );
        for (const r of batch) assert.equal(r.status, 201, r.text);
        triggered += batch.length;
      }
    })();
    let kills = 0;
    const inFlight: number[] = [];
    for (let k = 0; k < 3; k++) {
      await sleep(700 + Math.random() * 1300);
      const open = await app.running.ctx.db
        .selectFrom('automation_runs')
        .select('id')
        .where('automation_id', '=', automation.id)
        .where('status', '=', 'running')
        .execute();
      inFlight.push(open.length);
      await child.kill('SIGKILL');
      kills++;
      child = await startChildApp({ ...env, HTTP_PORT: String(await freePort()) });
    }
    await trigger;
    assert.equal(triggered, RUNS);

    const db = app.running.ctx.db;
    // Jobs a killed worker held run again when their lease ends.
    await eventually(
      async () => {
        const open = await db
          .selectFrom('automation_runs')
          .select('id')
          .where('automation_id', '=', automation.id)
          .where('status', '=', 'running')
          .limit(1)
          .execute();
        return open.length === 0;
      },
      150_000,
      500,
    );
    const runs = await allRuns(app.api, automation.id);
    const steps = await db
      .selectFrom('automation_run_steps')
      .select(['run_id', 'step_key', 'status'])
      .where('automation_id', '=', automation.id)
      .execute();
    const emails = await db.selectFrom('emails').select(['id', 'to']).where('workspace_id', '=', app.workspace.id).execute();
    // Deliveries a killed worker held resume when their lease ends.
    const undelivered = async () =>
      (await db.selectFrom('emails').select('id').where('workspace_id', '=', app.workspace.id).where('status', '<>', 'delivered').execute())
        .length;
    await eventually(async () => (await undelivered()) === 0, DELIVER_LEASE_MS + 60_000, 500).catch(() => null);
    const received = new Map<string, number>();
    for (const m of app.sink.messages) for (const r of m.rcptTo) received.set(r, (received.get(r) ?? 0) + 1);
    const report = {
      kills,
      runs: runs.length,
      completed: runs.filter((r) => r.status === 'completed').length,
      steps: steps.length,
      stepsNotCompleted: steps.filter((s) => s.status !== 'completed').length,
      emails: emails.length,
      distinctEmailRecipients: new Set(emails.map((e) => e.to)).size,
      undelivered: await undelivered(),
      sinkRecipients: received.size,
    };
    // A worker killed after the MX accepted a message but before the email row said so
    // delivers it again: that window belongs to the delivery engine (the chaos test closes it
    // with an MTA that holds its replies); reported here, not asserted.
    const sinkDuplicates = [...received.values()].filter((n) => n > 1).length;
    t.diagnostic(JSON.stringify({ ...report, inFlight, sinkDuplicates }));
    assert.ok(
      inFlight.some((n) => n > 0),
      'runs were in flight when the server was killed',
    );
    assert.deepEqual(report, {
      kills: 3,
      runs: RUNS,
      completed: RUNS,
      steps: RUNS * 4,
      stepsNotCompleted: 0,
      emails: RUNS,
      distinctEmailRecipients: RUNS,
      undelivered: 0,
      sinkRecipients: RUNS,
    });
    const perRun = new Map<string, Set<string>>();
    for (const s of steps) perRun.set(s.run_id, (perRun.get(s.run_id) ?? new Set()).add(s.step_key));
    assert.ok(
      [...perRun.values()].every((keys) => keys.size === 4),
      'each run visited each step once',
    );
  } finally {
    await child?.kill('SIGKILL');
    await app.close();
  }
});
