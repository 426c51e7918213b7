// Campaigns at volume, in one run on one machine (docs/performance.md, "campaign"):
// - deliver baseline: N single-recipient POST /v2/emails to a loopback sink, messages per second
//   from the first call until the sink has the N-th (the `deliver` scenario's measure);
// - a campaign to R recipients (default 100,000) to the same sink: recipients per second from
//   POST /campaigns/{id}/send until the sink has the R-th message, as a ratio of the baseline
//   (aim >= 0.9), and the server's peak RSS (VmHWM; aim < 200 MB, flat whatever R);
// - transactional sends made while the campaign runs (a few per second, to another sink): p50
//   and p99 from the API call until their sink has the message (aim p99 < 1 s);
// - the recipient snapshot of an S-contact audience (default 1,000,000): from the send until
//   the campaign is `sending` (the snapshot is one INSERT … SELECT), then it is canceled
//   (aims: < 5 s on SQLite, < 15 s on PostgreSQL).
// One Postlane process (role all), SQLite unless BENCH_DATABASE_URL. Contacts are written
// straight into the database (the import scenario measures imports).
import { join } from 'node:path';
import type { Scenario } from '../run.ts';
import { keepAliveClient, memoryMb, percentile, postlanePid, startPostlane, treeCpuSeconds } from '../lib.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { startSmtpSink } from '../../test/helpers/smtp-sink.ts';
import { seedAudience } from '../../test/campaigns/seed.ts';

const RECIPIENTS = Number(process.env.BENCH_CAMPAIGN_RECIPIENTS ?? 100_000);
const SNAPSHOT = Number(process.env.BENCH_CAMPAIGN_SNAPSHOT ?? 1_000_000);
const DELIVER = Number(process.env.BENCH_CAMPAIGN_DELIVER_COUNT ?? 5000);
const TRANSACTIONAL_PER_SECOND = Number(process.env.BENCH_CAMPAIGN_TRANSACTIONAL_RATE ?? 5);
const TIMEOUT_MS = Number(process.env.BENCH_CAMPAIGN_TIMEOUT_MS ?? 1_800_000);
const AIMS = { ratio: 0.9, rssMb: 200, p99Ms: 1000, snapshot: { sqlite: 5, postgres: 15 } };

const HTML = `<html><body><p>Hello {{first_name}},</p><p>${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(12)}</p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p></body></html>`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const scenario: Scenario = {
  name: 'campaign',
  description: `a ${RECIPIENTS.toLocaleString('en')}-recipient campaign beside the deliver rate, peak RSS, transactional p99 meanwhile; snapshot of ${SNAPSHOT.toLocaleString('en')} contacts`,
  async run({ connections }) {
    const bulkSink = await startSmtpSink({ rules: [], starttls: false, keepMessages: false, host: '127.0.0.1' });
    const mailSink = await startSmtpSink({ rules: [], starttls: false, keepMessages: true, host: '127.0.0.2', port: bulkSink.port });
    const dns = await startDnsServer();
    dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
    dns.set('mx.example.org', 'A', ['127.0.0.1']);
    dns.set('example.net', 'MX', [{ exchange: 'mx.example.net', priority: 10 }]);
    dns.set('mx.example.net', 'A', ['127.0.0.2']);
    const postlane = await startPostlane({
      DNS_SERVERS: dns.address,
      MX_PORT: String(bulkSink.port),
      MAIL_HOSTNAME: 'mail.bench.test',
      PUBLIC_URL: 'https://bench.test',
    });
    const lines: string[] = [];
    // The same client as the deliver scenario's, so the baseline is that scenario's measure.
    const client = keepAliveClient(postlane.url, connections + 1);
    const handle = openDatabase(postlane.env.DATABASE_URL ?? `sqlite:${join(postlane.env.DATA_DIR, 'postlane.db')}`);
    const kind = postlane.env.DATABASE_URL?.startsWith('postgres') ? 'postgres' : 'sqlite';
    try {
      const headers = { authorization: `Bearer ${postlane.key}`, 'content-type': 'application/json' };
      const request = (method: string, path: string, body?: unknown) =>
        client.request(method, `/v2${path}`, headers, body === undefined ? undefined : JSON.stringify(body));
      const call = async (method: string, path: string, body?: unknown) => {
        // Keep-alive connections left idle while contacts are seeded are closed by the server
        // (its keep-alive timeout); on SQLite the seeding blocks this process's event loop, so
        // it learns of that only when it reuses one (the request never reached the server).
        // Then all the idle ones are stale: once more, on a fresh connection.
        const res = await request(method, path, body).catch((error) => {
          if (
            !['ECONNRESET', 'EPIPE'].includes((error as NodeJS.ErrnoException).code ?? '') &&
            !/socket hang up/.test((error as Error).message)
          )
            throw error;
          client.dropIdle();
          return request(method, path, body);
        });
        if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
        return JSON.parse(res.text);
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
      const pid = postlanePid(postlane.env.HTTP_PORT);

      // 1. The deliver baseline.
      bulkSink.reset();
      let next = 0;
      const deliverStart = performance.now();
      const deliverCpu0 = treeCpuSeconds(pid);
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (next < DELIVER) {
            const i = next++;
            await call('POST', '/emails', {
              from: 'Bench <hello@bench.test>',
              to: `base${i}@example.org`,
              subject: `Baseline #${i}`,
              html: HTML.replace(/\{\{[^}]+\}\}/g, 'x'),
            });
          }
        }),
      );
      await bulkSink.waitForMessages(DELIVER, TIMEOUT_MS);
      const deliverRate = (DELIVER / (performance.now() - deliverStart)) * 1000;
      const deliverCpuMs = ((treeCpuSeconds(pid) - deliverCpu0) * 1000) / DELIVER;
      lines.push(
        `deliver baseline                 ${deliverRate.toFixed(0).padStart(7)} msg/s   (${DELIVER} single-recipient API sends, call to sink)   server CPU ${deliverCpuMs.toFixed(2)} ms/msg`,
      );

      // 2. The campaign, with transactional sends meanwhile.
      const audience = await call('POST', '/audiences', { name: 'Bench recipients' });
      const seedStart = performance.now();
      await seedAudience(handle.db, workspace.id, audience.id, RECIPIENTS, 'rcpt');
      lines.push(`(seeded ${RECIPIENTS} contacts in ${((performance.now() - seedStart) / 1000).toFixed(1)} s)`);
      const campaign = await call('POST', '/campaigns', {
        name: 'Bench',
        subject: 'Hello {{first_name}}',
        from_email: 'news@bench.test',
        from_name: 'Bench',
        html: HTML,
      });
      await call('POST', `/campaigns/${campaign.id}`, { recipients: [{ audience_id: audience.id }] });
      bulkSink.reset();
      const rssBefore = memoryMb(pid, 'VmRSS');
      let peakRss = rssBefore;
      const sentAt = new Map<string, number>();
      const latencies: number[] = [];
      const accepts: number[] = [];
      let running = true;
      let transactionalError: Error | null = null;
      const sampler = (async () => {
        let seen = 0;
        while (running) {
          peakRss = Math.max(peakRss, memoryMb(pid, 'VmRSS'));
          for (; seen < mailSink.messages.length; seen++) {
            const at = sentAt.get(mailSink.messages[seen].rcptTo[0]);
            if (at !== undefined) latencies.push(performance.now() - at);
          }
          await sleep(5);
        }
      })().catch(() => {
        // The server is gone (its /proc entry with it): stop waiting for the sink.
        running = false;
        throw new Error(`the server exited during the campaign`);
      });
      const transactional = (async () => {
        for (let i = 0; running; i++) {
          const to = `tx${i}@example.net`;
          const at = performance.now();
          sentAt.set(to, at);
          await call('POST', '/emails', {
            from: 'Bench <hello@bench.test>',
            to,
            subject: `Password reset #${i}`,
            text: 'Your code is 123456',
          });
          accepts.push(performance.now() - at);
          await sleep(1000 / TRANSACTIONAL_PER_SECOND);
        }
      })().catch((error) => {
        // Reported after the campaign (an unhandled rejection would hide what went wrong).
        if (running) transactionalError = error as Error;
        running = false;
      });
      const campaignStart = performance.now();
      const campaignCpu0 = treeCpuSeconds(pid);
      await call('POST', `/campaigns/${campaign.id}/send`, {});
      let timedOut = false;
      await Promise.race([bulkSink.waitForMessages(RECIPIENTS, TIMEOUT_MS).catch(() => (timedOut = true)), sampler]);
      const campaignMs = performance.now() - campaignStart;
      const campaignCpuMs = ((treeCpuSeconds(pid) - campaignCpu0) * 1000) / Math.max(1, bulkSink.accepted);
      running = false;
      await transactional;
      if (transactionalError) throw transactionalError;
      await sleep(1000); // the last transactional mails arrive
      await sampler;
      const rate = (bulkSink.accepted / campaignMs) * 1000;
      const hwm = memoryMb(pid, 'VmHWM');
      lines.push(
        `campaign                         ${rate.toFixed(0).padStart(7)} recipients/s   ${bulkSink.accepted}/${RECIPIENTS} at the sink in ${(campaignMs / 1000).toFixed(1)} s   server CPU ${campaignCpuMs.toFixed(2)} ms/recipient${timedOut ? '   TIMED OUT' : ''}`,
      );
      lines.push(`  ratio to deliver               ${(rate / deliverRate).toFixed(2).padStart(7)}   (aim >= ${AIMS.ratio})`);
      lines.push(
        `  server RSS                     peak ${peakRss.toFixed(0)} MB while sending (${rssBefore.toFixed(0)} MB before; VmHWM ${hwm.toFixed(0)} MB over the whole run; aim < ${AIMS.rssMb} MB)`,
      );
      lines.push(
        `  transactional meanwhile        ${latencies.length} sends   p50 ${percentile(latencies, 50).toFixed(0)} ms   p99 ${percentile(latencies, 99).toFixed(0)} ms   (call to sink; aim p99 < ${AIMS.p99Ms} ms); the API call alone p50 ${percentile(accepts, 50).toFixed(0)} ms   p99 ${percentile(accepts, 99).toFixed(0)} ms`,
      );

      // 3. The snapshot of a big audience.
      const big = await call('POST', '/audiences', { name: 'Bench snapshot' });
      const bigSeed = performance.now();
      await seedAudience(handle.db, workspace.id, big.id, SNAPSHOT, 'snap');
      lines.push(`(seeded ${SNAPSHOT} contacts in ${((performance.now() - bigSeed) / 1000).toFixed(1)} s)`);
      const snap = await call('POST', '/campaigns', { name: 'Snapshot', subject: 'Hi', from_email: 'news@bench.test', html: HTML });
      await call('POST', `/campaigns/${snap.id}`, { recipients: [{ audience_id: big.id }] });
      const snapStart = performance.now();
      await call('POST', `/campaigns/${snap.id}/send`, {});
      const sendCallS = (performance.now() - snapStart) / 1000;
      for (;;) {
        const state = await call('GET', `/campaigns/${snap.id}`);
        if (state.status !== 'queued') break;
        await sleep(20);
      }
      const snapshotS = (performance.now() - snapStart) / 1000;
      await call('POST', `/campaigns/${snap.id}/cancel`).catch(() => null); // a small one may be sent already
      const counted = await handle.db
        .selectFrom('campaign_recipients')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('campaign_id', '=', snap.id)
        .executeTakeFirst();
      lines.push(
        `snapshot                         ${snapshotS.toFixed(2).padStart(7)} s for ${Number(counted?.n ?? 0)} recipients (send to status sending, of which the send call ${sendCallS.toFixed(2)} s; aim < ${AIMS.snapshot[kind]} s on ${kind})`,
      );
      return { name: 'campaign', lines };
    } catch (error) {
      throw new Error(
        `${(error as Error).message}${(error as Error).cause ? ` (${String((error as Error).cause)})` : ''}\npostlane output:\n${postlane.output().slice(-4000)}`,
      );
    } finally {
      if (process.env.BENCH_CAMPAIGN_SERVER_LOG)
        (await import('node:fs')).writeFileSync(process.env.BENCH_CAMPAIGN_SERVER_LOG, postlane.output());
      client.close();
      await handle.close();
      await postlane.stop();
      await bulkSink.close();
      await mailSink.close();
      await dns.close();
    }
  },
};
