// PostgreSQL itself restarted under load (docs/performance.md): a private throwaway cluster (never
// the shared server) is restarted twice, once cleanly (`fast`: every connection cut) and once as a
// crash (`immediate`: WAL replayed), while API and SMTP relay clients send with retries and the
// Postlane process keeps running. Postlane must recover by itself and lose nothing. The MTA answers
// 250 at once: a delivery answered while the database is away is recorded once it is back (from the
// outcome journal), never sent again. Runs in both passes of npm test (it needs PostgreSQL's server
// binaries, not TEST_DATABASE_URL); skipped only where initdb is not installed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPrivatePostgres } from '../helpers/private-postgres.ts';

const postgres = await startPrivatePostgres();
after(async () => {
  await postgres?.stop();
});

test('PostgreSQL restarted twice under load: Postlane recovers without a restart of its own, nothing lost or doubled', {
  skip: postgres ? false : 'initdb (PostgreSQL server binaries) not installed',
  timeout: 170_000,
}, async (t) => {
  // The helpers read TEST_DATABASE_URL when loaded: point them at the private cluster first.
  process.env.TEST_DATABASE_URL = postgres!.url;
  const { runChaos } = await import('../helpers/chaos.ts');
  let restarts = 0;
  const report = await runChaos({
    clients: 6,
    smtpClients: 2,
    sendsPerClient: 15,
    kills: 2,
    killEvery: [800, 1600],
    restartDatabase: () => postgres!.restart(restarts++ === 0 ? 'fast' : 'immediate'),
    duringDelivery: true,
  });
  t.diagnostic(JSON.stringify(report));
  assert.equal(restarts, 2);
  assert.ok(report.sends >= 120);
  assert.ok(report.retries > 0, 'the restarts landed while clients were sending');
  assert.deepEqual(
    {
      unanswered: report.unanswered,
      acceptedTwice: report.acceptedTwice,
      acceptedWithoutEmail: report.acceptedWithoutEmail,
      stuckKeys: report.stuckKeys,
      undelivered: report.undelivered,
      deliveredTwice: report.deliveredTwice,
    },
    { unanswered: 0, acceptedTwice: 0, acceptedWithoutEmail: 0, stuckKeys: 0, undelivered: 0, deliveredTwice: 0 },
  );
  assert.ok(report.dataReceived >= report.sends);
});
