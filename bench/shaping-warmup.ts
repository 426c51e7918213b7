// Warm-up against the schedule (docs/delivery.md "Warm-up"), part of `npm run bench shaping`:
// a sending domain marked new, a backlog larger than the schedule allows, two destinations (a
// plain MX host and one recognised as Gmail), real SMTP delivery to a loopback sink. Days are
// compressed with the project's clock (src/platform/clock.ts): each simulated day runs until
// every message left is deferred to a later day, then the clock moves to the next UTC day. The
// sink's count per destination and day is compared with the day's cap (aim: within ±5 %); the
// day's transactional mail must go before its bulk mail. Postlane runs in this process (the
// clock is moved in-process); the database is SQLite, or PostgreSQL with TEST_DATABASE_URL.
import { startDeliveryApp } from '../test/emails/delivery/helpers.ts';
import { nowMs, resetClock, shiftClock } from '../src/platform/clock.ts';
import { updateWorkspace } from '../src/resources/workspaces/service.ts';

const SCHEDULE = (process.env.BENCH_WARMUP_SCHEDULE ?? '50,100,200,400,800').split(',').map(Number);
const EXTRA = 100;
const DAY = 86_400_000;
const DESTINATIONS = [
  { domain: 'example.org', mx: 'mx.example.org', key: 'mx.example.org' },
  { domain: 'gmail.test', mx: 'alt1.gmail-smtp-in.l.google.com', key: 'gmail' },
];

export const warmupDescription = `warm-up: schedule ${SCHEDULE.join(', ')} per destination and day, 2 destinations, a backlog of ${SCHEDULE.reduce((a, b) => a + b, 0) + EXTRA} each; sink volume per day within ±5 % of the cap, transactional first`;

export async function runWarmup(): Promise<string[]> {
  const now0 = nowMs();
  shiftClock((Math.floor(now0 / DAY) + 1) * DAY + 3600_000 - now0); // 01:00 UTC of a day
  process.env.DELIVERY_WARMUP = JSON.stringify({ bench: SCHEDULE });
  const app = await startDeliveryApp({ sink: { starttls: false } });
  const db = app.running.ctx.db;
  await updateWorkspace(db, app.workspace.id, { sendRate: 1_000_000, dailyLimit: 1_000_000_000, credits: 1_000_000_000 });
  const dayStart = () => Math.floor(nowMs() / DAY) * DAY;
  const moveTo = (ms: number) => shiftClock(ms - nowMs());
  try {
    for (const d of DESTINATIONS) {
      app.dns.set(d.domain, 'MX', [{ exchange: d.mx, priority: 10 }]);
      app.dns.set(d.mx, 'A', ['127.0.0.1']);
    }
    const started = await app.api.post('/v2/delivery/warmup', { domain: 'acme.test', schedule: 'bench' });
    if (started.status !== 201) throw new Error(`POST /v2/delivery/warmup: ${started.status} ${started.text}`);

    // The backlog, due at 02:00 today: a quarter transactional, the rest bulk (a campaign's).
    const perDestination = SCHEDULE.reduce((a, b) => a + b, 0) + EXTRA;
    const dueAt = new Date(dayStart() + 2 * 3600_000).toISOString();
    const kind = new Map<string, 'transactional' | 'bulk'>();
    const bulkIds: string[] = [];
    const sendStart = performance.now();
    for (const d of DESTINATIONS) {
      let i = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (i < perDestination) {
            const n = i++;
            const to = `user${n}@${d.domain}`;
            const res = await app.api.post('/v2/emails', {
              from: 'Acme <news@acme.test>',
              to,
              subject: `Warm-up #${n}`,
              text: 'Hello',
              scheduled_at: dueAt,
            });
            if (res.status !== 200) throw new Error(`POST /v2/emails: ${res.status} ${res.text}`);
            const bulk = n % 4 !== 0;
            kind.set(to, bulk ? 'bulk' : 'transactional');
            if (bulk) bulkIds.push(res.body.id);
          }
        }),
      );
    }
    for (let i = 0; i < bulkIds.length; i += 500)
      await db
        .updateTable('emails')
        .set({ source: 'campaign' })
        .where('id', 'in', bulkIds.slice(i, i + 500))
        .execute();
    const sendS = (performance.now() - sendStart) / 1000;

    /** Until nothing is due or running: what is left waits for a later moment. */
    const settled = async () => {
      for (let quiet = 0; quiet < 3; ) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        const busy = await db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('type', '=', 'email.deliver')
          .where('dead_at', 'is', null)
          .where((eb) => eb.or([eb('run_at', '<=', Math.floor(nowMs())), eb('locked_by', 'is not', null)]))
          .executeTakeFirstOrThrow();
        quiet = Number(busy.n) === 0 ? quiet + 1 : 0;
      }
    };
    const lines: string[] = [`backlog queued: ${perDestination * DESTINATIONS.length} emails in ${sendS.toFixed(1)} s`];
    let seen = 0;
    let worst = 0;
    let orderViolations = 0;
    const started0 = performance.now();
    for (let day = 1; day <= SCHEDULE.length + 1; day++) {
      // Day 1 starts at 02:00 (the backlog comes due); later days at 00:00:30, bulk at 00:16.
      moveTo(day === 1 ? dayStart() + 2 * 3600_000 + 1000 : dayStart() + DAY + 30_000);
      const dayT0 = performance.now();
      await settled();
      if (day > 1) {
        moveTo(dayStart() + 16 * 60_000);
        await settled();
      }
      const today = app.sink.messages.slice(seen);
      seen = app.sink.messages.length;
      const cap = SCHEDULE[day - 1] ?? null;
      const parts: string[] = [];
      for (const d of DESTINATIONS) {
        const mine = today.filter((m) => m.rcptTo[0].endsWith(`@${d.domain}`));
        const transactional = mine.filter((m) => kind.get(m.rcptTo[0]) === 'transactional').length;
        // Transactional first: no bulk message before the day's last transactional one.
        const lastT = mine.map((m) => kind.get(m.rcptTo[0])).lastIndexOf('transactional');
        if (day > 1) orderViolations += mine.slice(0, Math.max(0, lastT)).filter((m) => kind.get(m.rcptTo[0]) === 'bulk').length;
        if (cap !== null) worst = Math.max(worst, Math.abs(mine.length - cap) / cap);
        parts.push(
          `${d.key} ${mine.length}${cap === null ? '' : `/${cap} (${(((mine.length - cap) / cap) * 100).toFixed(1)} %)`} [${transactional} transactional]`,
        );
      }
      const [state] = (await app.api.get('/v2/delivery/warmup')).body.data;
      lines.push(
        `day ${day}${cap === null ? ' (schedule over, no cap)' : ''}: ${parts.join(', ')}; deferred after the day ${state?.deferred ?? 0}; ${((performance.now() - dayT0) / 1000).toFixed(1)} s`,
      );
    }
    const failed = await db
      .selectFrom('emails')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('status', 'in', ['failed', 'bounced'])
      .executeTakeFirstOrThrow();
    lines.push(
      `sink total ${app.sink.messages.length}/${perDestination * DESTINATIONS.length} over ${SCHEDULE.length + 1} simulated days in ${((performance.now() - started0) / 1000).toFixed(1)} s; failed or bounced ${failed.n}`,
    );
    lines.push(
      `largest deviation from a day's cap: ${(worst * 100).toFixed(1)} % (aim within ±5 %); from day 2 on, bulk messages sent before a transactional one of the same day: ${orderViolations} (day 1's backlog all came due at once)`,
    );
    return lines;
  } finally {
    delete process.env.DELIVERY_WARMUP;
    resetClock();
    await app.close();
  }
}
