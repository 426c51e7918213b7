// The outcome journal (src/resources/emails/delivery/journal.ts): a 250 or 5xx that a killed
// worker had read but not committed is recorded at the next start as the worker would have
// (status, event, attempt rows, the job done), exactly once even when applied twice; journals
// of running processes are left alone; the file only holds what is not committed yet.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDeliveryApp, type DeliveryApp } from './helpers.ts';
import { JOURNAL_DIR, OutcomeJournal, type JournalEntry } from '../../../src/resources/emails/delivery/journal.ts';
import { applyOutcomeJournals } from '../../../src/resources/emails/delivery/journal-replay.ts';
import type { DeliveryOutcome } from '../../../src/mail/smtp-delivery.ts';

let app: DeliveryApp;
before(async () => {
  // No worker here: the deliveries below were "made" by a process that was killed.
  app = await startDeliveryApp({ roles: ['api'] });
});
after(async () => {
  await app.close();
});

/** The pid of a process that has exited. */
const deadPid = () => spawnSync('true').pid!;

function answer(kind: 'delivered' | 'permanent', code: number, response: string): DeliveryOutcome {
  const attempt = {
    kind,
    code,
    enhancedCode: response.split(' ')[1],
    response,
    mxHost: 'mx.example.org',
    address: '127.0.0.1',
    tls: 'opportunistic',
    command: 'DATA',
  };
  return { ...attempt, attempts: [attempt] };
}

/** Sends an email, has a (soon dead) worker claim its job, and writes that worker's journal line. */
async function journaled(to: string, outcome: DeliveryOutcome, pid: number): Promise<{ id: string; file: string; entry: JournalEntry }> {
  const res = await app.api.post('/v2/emails', { from: 'hello@acme.test', to, subject: 'Journaled', text: 'Hi' });
  assert.equal(res.status, 200, res.text);
  const id = res.body.id as string;
  const job = await app.jobOf(id);
  await app.running.ctx.db
    .updateTable('jobs')
    .set({ locked_by: 'killed-worker', locked_until: Date.now() + 20_000, attempts: 1 })
    .where('id', '=', job.id)
    .execute();
  const entry: JournalEntry = {
    email: id,
    job: { id: Number(job.id), lockedBy: 'killed-worker' },
    at: '2026-01-02T03:04:05.678Z',
    outcome,
  };
  const dir = join(app.config.dataDir, JOURNAL_DIR);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${pid}-0123456789ab.jsonl`);
  writeFileSync(file, `${JSON.stringify(entry)}\n`, { flag: 'a' });
  return { id, file, entry };
}

test('a 250 journaled by a killed worker is recorded at the next start: delivered, its event, its attempt, the job done; applying it again changes nothing', async () => {
  const { id, file } = await journaled('journal-1@example.org', answer('delivered', 250, '250 2.0.0 Ok: queued as A1'), deadPid());
  // A torn last line (a write cut by a power loss) is skipped.
  writeFileSync(file, '{"email":"em_', { flag: 'a' });
  const first = await applyOutcomeJournals(app.running.ctx.db, app.config.dataDir);
  assert.deepEqual(first, { files: 1, outcomes: 1, recorded: 1 });
  assert.equal(existsSync(file), false, 'the journal is removed once applied');

  const email = await app.email(id);
  assert.equal(email.status, 'delivered');
  assert.equal(email.delivered_at, '2026-01-02T03:04:05.678Z', 'delivered when the answer was read');
  assert.equal(email.status_detail, 'mx.example.org: 250 2.0.0 Ok: queued as A1');
  assert.deepEqual(
    (await app.eventsOf(id)).map((e) => e.type),
    ['email.accepted', 'email.delivered'],
  );
  assert.deepEqual(
    (await app.attemptsOf(id)).map((a) => [a.outcome, a.smtp_code, a.response]),
    [['delivered', 250, '250 2.0.0 Ok: queued as A1']],
  );
  assert.equal(await app.jobOf(id), undefined, 'the job its worker held is done');
  const read = await app.api.get(`/v2/emails/${id}`);
  assert.equal(read.body.status, 'delivered');

  // Killed while applying: the file is still there at the next start.
  await journaled('journal-1b@example.org', answer('delivered', 250, '250 ok'), deadPid()).then(({ file: other }) =>
    writeFileSync(other, readFileSync(other)),
  );
  const { entry } = {
    entry: { email: id, job: null, at: '2026-01-02T03:04:05.678Z', outcome: answer('delivered', 250, '250 2.0.0 Ok: queued as A1') },
  };
  writeFileSync(join(app.config.dataDir, JOURNAL_DIR, `${deadPid()}-feedfeedfeed.jsonl`), `${JSON.stringify(entry)}\n`);
  const again = await applyOutcomeJournals(app.running.ctx.db, app.config.dataDir);
  assert.deepEqual(again, { files: 2, outcomes: 2, recorded: 1 }, 'only the other email moved');
  assert.deepEqual(
    (await app.eventsOf(id)).map((e) => e.type),
    ['email.accepted', 'email.delivered'],
  );
  assert.equal((await app.attemptsOf(id)).length, 1);
});

test('a journaled 5xx is recorded as the bounce it was: bounced, suppressed, one email.bounced', async () => {
  const { id } = await journaled('journal-2@example.org', answer('permanent', 550, '550 5.1.1 User unknown'), deadPid());
  assert.deepEqual(await applyOutcomeJournals(app.running.ctx.db, app.config.dataDir), { files: 1, outcomes: 1, recorded: 1 });
  const email = await app.email(id);
  assert.equal(email.status, 'bounced');
  assert.equal(email.bounce_type, 'hard');
  assert.deepEqual(
    (await app.eventsOf(id)).map((e) => e.type),
    ['email.accepted', 'email.bounced'],
  );
  const suppressed = await app.api.get('/v2/suppressions');
  assert.ok(
    suppressed.body.data.some((s: { email: string }) => s.email === 'journal-2@example.org'),
    JSON.stringify(suppressed.body),
  );
});

test('the journal of a process that is still running is left alone', async () => {
  // The test runner that started this file: alive, and not this process.
  const { id, file } = await journaled('journal-3@example.org', answer('delivered', 250, '250 ok'), process.ppid);
  assert.deepEqual(await applyOutcomeJournals(app.running.ctx.db, app.config.dataDir), { files: 0, outcomes: 0, recorded: 0 });
  assert.equal(existsSync(file), true);
  assert.equal((await app.email(id)).status, 'accepted');
});

test('the file holds only outcomes not committed yet: emptied when none is pending, rewritten when it grows, removed at close', async () => {
  const journal = new OutcomeJournal(app.config.dataDir, { rotateBytes: 2000 });
  const lines = () =>
    readFileSync(journal.path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line).email);
  const entry = (email: string): JournalEntry => ({
    email,
    job: null,
    at: new Date().toISOString(),
    outcome: answer('delivered', 250, '250 ok'),
  });
  journal.append(entry('em_a'));
  journal.append(entry('em_b'));
  assert.deepEqual(lines(), ['em_a', 'em_b']);
  assert.equal(journal.pendingFor('em_b')?.email, 'em_b');
  journal.committed('em_a');
  assert.deepEqual(lines(), ['em_a', 'em_b'], 'appended only: no rewrite per commit');
  journal.committed('em_b');
  assert.deepEqual(lines(), [], 'nothing pending: emptied');
  assert.equal(journal.pendingFor('em_b'), undefined);
  // Past rotateBytes with one outcome still pending: rewritten with that one only.
  journal.append(entry('em_keep'));
  for (let i = 0; i < 10; i++) journal.append(entry(`em_${i}`));
  for (let i = 0; i < 10; i++) journal.committed(`em_${i}`);
  const rewritten = lines();
  assert.equal(rewritten[0], 'em_keep');
  assert.ok(rewritten.length < 5, `rewritten without the outcomes committed before: ${rewritten}`);
  journal.append(entry('em_after'));
  assert.deepEqual(lines(), [...rewritten, 'em_after'], 'appends go on in the rewritten file');
  journal.close();
  assert.equal(existsSync(journal.path), true, 'closed with outcomes pending: kept for the next start');

  const clean = new OutcomeJournal(app.config.dataDir);
  clean.append(entry('em_c'));
  clean.committed('em_c');
  clean.close();
  assert.equal(existsSync(clean.path), false);
});
