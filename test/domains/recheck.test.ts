// The daily re-check: a recurring job that re-checks every domain once a day, un-verifies
// a domain whose required record stopped passing, and exists exactly once however many
// processes start. Time is moved forward with the test clock, not waited for.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDomainApp, publish, REQUIRED, type DomainTestApp } from './helpers.ts';
import { eventually, freePort, startChildApp, databaseUrlOf } from '../helpers/app.ts';
import { shiftClock, resetClock } from '../../src/platform/clock.ts';
import { JobRunner } from '../../src/platform/jobs.ts';
import { RECHECK_JOB, recheckJob } from '../../src/resources/domains/recheck.ts';

const DAY = 24 * 60 * 60 * 1000;
let app: DomainTestApp;
before(async () => {
  app = await startDomainApp();
});
after(async () => {
  resetClock();
  await app.close();
});

async function pendingChainJobs() {
  return app.running.ctx.db
    .selectFrom('jobs')
    .select(['id', 'run_at', 'locked_by'])
    .where('type', '=', RECHECK_JOB)
    .where('dead_at', 'is', null)
    .execute();
}

/** The re-check's jobs once no run holds it (a second instance would show here). */
async function settledChainJobs() {
  return eventually(async () => {
    const jobs = await pendingChainJobs();
    return jobs.every((job) => job.locked_by === null) && jobs;
  }, 5000).catch(() => pendingChainJobs());
}

/** Starts and stops `n` more job runners with the re-check, as worker processes starting would. */
async function startWorkers(n: number): Promise<void> {
  const runners = Array.from(
    { length: n },
    () => new JobRunner(app.running.ctx.db, { handlers: [recheckJob({ db: app.running.ctx.db, config: app.config })] }),
  );
  await Promise.all(runners.map((runner) => runner.start()));
  await Promise.all(runners.map((runner) => runner.stop()));
}

/** Environment for another `postlane serve` process on this app's database. */
async function sameDatabaseEnv(): Promise<Record<string, string>> {
  const databaseUrl = await databaseUrlOf(app);
  return {
    DATABASE_URL: databaseUrl,
    DATA_DIR: app.config.dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(await freePort()),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    DNS_SERVERS: app.dns.address,
  };
}

async function domainStatus(api: DomainTestApp['api'], id: string) {
  const body = (await api.get(`/v2/domains/${id}`)).body;
  return body;
}

test('the daily check un-verifies a verified domain whose required record was removed', async () => {
  const { api, workspace: ws } = await app.newWorkspace({ plan: 'pro' });
  const domain = (await api.post('/v2/domains', { name: 'daily-example.com' })).body;
  publish(app.dns, domain, REQUIRED);
  const verified = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.equal(verified.verification_status, 'verified');

  app.dns.remove('postlane._domainkey.daily-example.com');
  shiftClock(DAY + 60_000);
  const after = await eventually(async () => {
    const body = await domainStatus(api, domain.id);
    return body.dns_checked_at !== verified.dns_checked_at && body;
  });
  assert.deepEqual(
    [after.verification_status, after.verified_at, after.dkim_status, after.dkim_error],
    ['pending', null, 'missing', 'No DKIM record found at postlane._domainkey.daily-example.com'],
  );
  assert.deepEqual([after.spf_status, after.return_path_status], ['ok', 'ok']);
  const events = await app.running.ctx.db
    .selectFrom('events')
    .select('data')
    .where('workspace_id', '=', ws.id)
    .where('type', '=', 'domain.updated')
    .orderBy('seq')
    .execute();
  assert.deepEqual(
    events.map((e) => JSON.parse(e.data).verification_status),
    ['verified', 'pending'],
  );
  assert.equal((await settledChainJobs()).length, 1, 'one instance, made due again');
});

test('the daily check verifies a pending domain whose records appeared, and leaves unchanged ones alone', async () => {
  const { api } = await app.newWorkspace({ plan: 'pro' });
  const domain = (await api.post('/v2/domains', { name: 'appears-example.com' })).body;
  const untouched = (await api.post('/v2/domains', { name: 'untouched-example.com' })).body;
  publish(app.dns, domain, REQUIRED);
  shiftClock(DAY + 60_000);
  const verified = await eventually(async () => {
    const body = await domainStatus(api, domain.id);
    return body.verification_status === 'verified' && body;
  });
  assert.equal(verified.verified_at, verified.dns_checked_at);
  const other = await eventually(async () => {
    const body = await domainStatus(api, untouched.id);
    return body.dns_checked_at !== null && body;
  });
  assert.equal(other.verification_status, 'pending');
  assert.equal(other.updated_at !== untouched.updated_at, true, 'its record statuses changed from pending to missing');
});

test('exactly one re-check job, however many processes start', async () => {
  const { db } = app.running.ctx;
  assert.equal((await settledChainJobs()).length, 1);

  // Many starts at once (each worker makes sure the recurring job exists).
  await startWorkers(10);
  assert.equal((await settledChainJobs()).length, 1);

  // A second server process on the same database starts (and races to start the chain).
  const child = await startChildApp(await sameDatabaseEnv());
  try {
    assert.equal((await settledChainJobs()).length, 1);
    // It runs for a few simulated days, the same row made due again after each run.
    for (let day = 0; day < 3; day++) {
      const [job] = await settledChainJobs();
      shiftClock(DAY);
      await eventually(async () => {
        const jobs = await pendingChainJobs();
        return jobs.length === 1 && jobs[0].id === job.id && jobs[0].locked_by === null && Number(jobs[0].run_at) > Number(job.run_at);
      });
    }
    assert.equal((await settledChainJobs()).length, 1);
  } finally {
    await child.kill();
  }

  // A job removed by hand is made again by the next start, once.
  const [current] = await settledChainJobs();
  await db.deleteFrom('jobs').where('id', '=', current.id).execute();
  await startWorkers(2);
  const restarted = await settledChainJobs();
  assert.equal(restarted.length, 1);
  assert.notEqual(restarted[0].id, current.id);
});
