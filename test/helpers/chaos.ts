// The chaos run shared by the chaos test and the `chaos` bench scenario (docs/performance.md): API
// clients send with an Idempotency-Key each and SMTP clients through the relay (STARTTLS, AUTH)
// with a Message-ID each, all retrying on connection errors and temporary refusals, while the one
// Postlane process (API, relay and workers) is killed with SIGKILL at random moments and restarted
// on the same data. Deliveries in flight are cut mid-DATA by the kills (the MTA holds its replies
// until the last restart). The report says what was lost, doubled or stuck.
//
// With `duringDelivery` the MTA answers 250 at once instead, and each kill lands in the middle
// of delivering: replies to DATA are held for a moment, and the moment the server has read
// every 250 sent so far (each of those connections sent its next command: stalling-mta.ts,
// repliesRead) it is killed, with those outcomes read and their batched commit (outcomes.ts)
// most likely not yet made. A message the sink then gets twice was answered 250, the answer
// read, and sent again after the restart. Optionally a campaign is sent meanwhile.
import { eventually, freePort, startChildApp, type ChildApp, databaseUrlOf } from './app.ts';
import { startSendingApp } from './sending.ts';
import { submit } from '../smtp/helpers.ts';
import { startStallingMta } from './stalling-mta.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { DELIVER_LEASE_MS } from '../../src/resources/emails/service.ts';
import { audience, CONTENT } from '../campaigns/helpers.ts';
import { seedAudience } from '../campaigns/seed.ts';

export interface ChaosOptions {
  /** API clients. */
  clients: number;
  /** SMTP relay clients besides them (each sends as many as an API client). */
  smtpClients?: number;
  /** Each client sends at least this many, and keeps sending until the last kill. */
  sendsPerClient: number;
  kills: number;
  /** Pause before each kill, in ms: a random value in [min, max). */
  killEvery: [number, number];
  /** Instead of killing Postlane, restart its database this way (PostgreSQL restarted under
   *  load: Postlane must recover by itself). Clients then also retry 500s, which a request cut
   *  off from its database may answer. */
  restartDatabase?: () => Promise<void>;
  /** The MTA answers at once and the kills land while deliveries are answered (see above). */
  duringDelivery?: boolean;
  /** With duringDelivery: each kill once the MTA has answered this many more messages since the
   *  last start (a random number in [min, max)), so the kills land while a backlog is delivered
   *  at full speed; instead of killEvery. */
  killAfterDeliveries?: [number, number];
  /** A campaign to this many recipients is sent at the start (its fan-out and deliveries run meanwhile). */
  campaignRecipients?: number;
}

export interface ChaosReport {
  sends: number;
  /** Of them, through the SMTP relay. */
  smtpSends: number;
  kills: number;
  retries: number;
  /** Of them, SMTP clients sending a message again. */
  smtpRetries: number;
  /** Answers asking to retry later: 409 (key in progress), 451 (relay). */
  conflicts: number;
  /** Keys (or relayed messages) whose client never got a 200 (or 250): should be 0. */
  unanswered: number;
  /** Emails stored beyond one per key, and answered ids not stored. */
  acceptedTwice: number;
  acceptedWithoutEmail: number;
  stuckKeys: number;
  /** Emails not delivered by the deadline, and recipients or Message-IDs seen more than once. */
  undelivered: number;
  deliveredTwice: number;
  /** Of them, messages (Message-IDs) the MTA accepted more than once. */
  messagesDeliveredTwice: number;
  /** From the last restart until the last email was delivered. */
  deliveredWithinMs: number;
  /** The emails accepted before the server answered again after the last kill (or the database
   *  after the last restart): from then until the last of them was delivered (0: all before). */
  backlogDeliveredMs: number;
  dataReceived: number;
  /** How long each start after a kill took until the server answered /healthz, in ms. */
  restartsMs: number[];
  /** With duringDelivery: kills that came once every 250 sent had been read (the rest: after 2 s). */
  killsAfterRepliesRead: number;
  /** The campaign's recipients, the emails it made (aim: one each) and whether it reached `sent`. */
  campaign: { recipients: number; emails: number; sent: boolean } | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const began = Date.now();
  const mark = (what: string) => process.env.CHAOS_DEBUG && console.error(`chaos +${Date.now() - began} ms: ${what}`);
  const mta = await startStallingMta({ stalling: !options.duringDelivery });
  // This process prepares the data and reads it back; the server under fire is a child.
  const app = await startSendingApp({ roles: ['api'], workspace: { credits: 10_000_000 } });
  let child: ChildApp | null = null;
  try {
    await app.verifiedDomain('acme.test');
    await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 100_000, dailyLimit: 10_000_000 });
    app.dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
    app.dns.set('mx.example.org', 'A', ['127.0.0.1']);
    const env = {
      DATABASE_URL: await databaseUrlOf(app),
      DATA_DIR: app.config.dataDir,
      HTTP_HOST: '127.0.0.1',
      SMTP_INBOUND_PORT: '0',
      DNS_SERVERS: app.dns.address,
      MX_PORT: String(mta.port),
      MAIL_HOSTNAME: 'mail.postlane.test',
    };
    // Each start listens on new ports: a client never reaches a half-closed old listener.
    let smtpPort = 0;
    const start = async () => {
      smtpPort = await freePort();
      return startChildApp({ ...env, HTTP_PORT: String(await freePort()), SMTP_SUBMISSION_PORT: String(smtpPort) });
    };
    let campaignId: string | null = null;
    if (options.campaignRecipients) {
      const list = await audience(app.api, 'Chaos');
      await seedAudience(app.running.ctx.db, app.workspace.id, list, options.campaignRecipients, 'campaign');
      const created = await app.api.post('/v2/campaigns', { name: 'Chaos', from_email: 'news@acme.test', ...CONTENT });
      await app.api.post(`/v2/campaigns/${created.body.id}`, { recipients: [{ audience_id: list }] });
      campaignId = created.body.id as string;
    }
    mark('ready to start');
    child = await start();
    mark('started');
    let url = child.url;
    if (campaignId) {
      const sent = await app.api.post(`/v2/campaigns/${campaignId}/send`);
      if (sent.status !== 200) throw new Error(`campaign send: ${sent.status} ${sent.text}`);
    }
    let killsAfterRepliesRead = 0;
    const outputs: string[] = [];
    const restartsMs: number[] = [];
    let lastStartAt = Date.now();
    let killsDone = false;
    const stats = { retries: 0, smtpRetries: 0, conflicts: 0, unanswered: 0 };

    // With the database restarted instead, Postlane must ride it out: it never exits.
    const assertServerAlive = () => {
      if (options.restartDatabase && child && child.process.exitCode !== null) {
        throw new Error(`Postlane exited (${child.process.exitCode}) when its database restarted:\n${child.output().slice(-3000)}`);
      }
    };

    // One client: its sends in order, each retried with the same key until it gets a 200.
    const client = async (c: number) => {
      const results: Array<{ key: string; id: string }> = [];
      for (let i = 0; i < options.sendsPerClient || !killsDone; i++) {
        await sleep(10 + Math.random() * 20);
        const key = `chaos-${c}-${i}`;
        for (let attempt = 0; ; attempt++) {
          if (attempt >= 1000) {
            stats.unanswered++;
            break;
          }
          try {
            const res = await fetch(`${url}/v2/emails`, {
              method: 'POST',
              headers: { authorization: `Bearer ${app.key}`, 'content-type': 'application/json', 'idempotency-key': key },
              body: JSON.stringify({ from: 'hello@acme.test', to: `c${c}-n${i}@example.org`, subject: `Chaos ${key}`, text: 'Hello' }),
            });
            const body = (await res.json()) as { id?: string };
            if (res.status === 200 && body.id) {
              results.push({ key, id: body.id });
              break;
            }
            // 409: the key is held by a request that died with its process, until its lease ends.
            if (res.status === 409) stats.conflicts++;
            else if (![429, 503].includes(res.status) && !(options.restartDatabase && res.status === 500))
              throw new Error(`${key}: ${res.status} ${JSON.stringify(body)}`);
          } catch (error) {
            if (error instanceof Error && error.message.startsWith(key)) throw error;
            assertServerAlive();
            // The server is down: retry with the same key, as a client should.
          }
          stats.retries++;
          await sleep(50 + Math.random() * 100);
        }
      }
      return results;
    };

    // One relay client: its messages in order, each sent again (same Message-ID, same envelope)
    // until it gets a 250, after connection errors and 4xx replies alike, as an MTA would.
    const smtpClient = async (c: number) => {
      const results: Array<{ key: string; id: string }> = [];
      for (let i = 0; i < options.sendsPerClient || !killsDone; i++) {
        await sleep(10 + Math.random() * 20);
        const key = `chaos-smtp-${c}-${i}`;
        for (let attempt = 0; ; attempt++) {
          if (attempt >= 1000) {
            stats.unanswered++;
            break;
          }
          const sent = await submit(
            { port: smtpPort, key: app.key },
            {
              from: 'hello@acme.test',
              to: `s${c}-n${i}@example.org`,
              subject: `Chaos ${key}`,
              text: 'Hello',
              messageId: `<${key}@client.test>`,
            },
          );
          if (sent.ok && sent.id) {
            results.push({ key, id: sent.id });
            break;
          }
          if (sent.code === 0) assertServerAlive();
          if (sent.code === 451) stats.conflicts++;
          else if (sent.code >= 500) throw new Error(`${key}: ${sent.response}`);
          stats.retries++;
          stats.smtpRetries++;
          await sleep(50 + Math.random() * 100);
        }
      }
      return results;
    };

    const killer = (async () => {
      for (let k = 0; k < options.kills; k++) {
        const [min, max] = options.killEvery;
        await sleep(min + Math.random() * (max - min));
        if (options.killAfterDeliveries) {
          const [fewest, most] = options.killAfterDeliveries;
          const target = mta.accepted.length + fewest + Math.floor(Math.random() * (most - fewest));
          await eventually(async () => mta.accepted.length >= target, 30_000, 2).catch(() => null);
        }
        if (options.restartDatabase) {
          await options.restartDatabase();
          lastStartAt = Date.now();
          continue;
        }
        if (options.duringDelivery) {
          mta.hold();
          if (await mta.repliesRead(2000)) killsAfterRepliesRead++;
        }
        mark(`kill ${k + 1} (${mta.accepted.length} answered)`);
        await child!.kill('SIGKILL');
        outputs.push(child!.output());
        if (options.duringDelivery) mta.release({ dropHeld: true });
        const restarting = Date.now();
        child = await start();
        restartsMs.push(Date.now() - restarting);
        lastStartAt = Date.now();
        mark('restarted');
        url = child.url;
      }
      killsDone = true;
    })();
    const relayed = Promise.all(Array.from({ length: options.smtpClients ?? 0 }, (_, c) => smtpClient(c)));
    const sent = (await Promise.all(Array.from({ length: options.clients }, (_, c) => client(c)))).flat();
    const sentBySmtp = (await relayed).flat();
    sent.push(...sentBySmtp);
    await killer;
    const restartedAt = Date.now();
    mark('clients done');
    mta.release(); // from now on the MTA answers

    const db = app.running.ctx.db;
    const rows = await db
      .selectFrom('emails')
      .select(['id', 'message_id'])
      .where('workspace_id', '=', app.workspace.id)
      .where('source', '<>', 'campaign')
      .execute();
    const stored = new Set(rows.map((r) => r.id));
    const stuck = await db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('workspace_id', '=', app.workspace.id)
      .where('state', '=', 'pending')
      .execute();
    const notDelivered = async () =>
      (await db.selectFrom('emails').select('id').where('workspace_id', '=', app.workspace.id).where('status', '<>', 'delivered').execute())
        .length;
    // Deliveries a killed worker held resume when their lease ends.
    const campaignSent = async () =>
      !campaignId || (await db.selectFrom('campaigns').select('status').where('id', '=', campaignId).executeTakeFirst())?.status === 'sent';
    await eventually(async () => (await campaignSent()) && (await notDelivered()) === 0, DELIVER_LEASE_MS + 60_000, 200).catch(() => null);
    const deliveredWithinMs = Date.now() - restartedAt;
    const backlog = await db
      .selectFrom('emails')
      .select((eb) => eb.fn.max('delivered_at').as('last'))
      .where('workspace_id', '=', app.workspace.id)
      .where('created_at', '<', new Date(lastStartAt).toISOString())
      .executeTakeFirst();
    const backlogDeliveredMs = backlog?.last ? Math.max(0, Date.parse(String(backlog.last)) - lastStartAt) : 0;
    mark('all delivered');
    const campaignEmails = async () =>
      Number(
        (
          await db
            .selectFrom('emails')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('workspace_id', '=', app.workspace.id)
            .where('source', '=', 'campaign')
            .executeTakeFirst()
        )?.n ?? 0,
      );

    const seen = new Map<string, number>();
    const messageIds = new Map<string, number>();
    for (const message of mta.accepted) {
      const messageId = /^Message-ID:\s*(\S+)/im.exec(message.raw.toString('utf8'))?.[1] ?? '?';
      for (const key of [...message.rcptTo, messageId]) seen.set(key, (seen.get(key) ?? 0) + 1);
      messageIds.set(messageId, (messageIds.get(messageId) ?? 0) + 1);
    }
    if (process.env.CHAOS_DEBUG) {
      console.error(
        'seen twice:',
        [...seen].filter(([, n]) => n > 1).map(([key]) => key),
      );
      console.error(`output of the killed servers:\n${outputs.join('\n----\n').slice(-20000)}`);
    }
    return {
      sends: sent.length,
      smtpSends: sentBySmtp.length,
      kills: options.kills,
      retries: stats.retries,
      smtpRetries: stats.smtpRetries,
      conflicts: stats.conflicts,
      unanswered: stats.unanswered,
      acceptedTwice: rows.length - new Set(sent.map((s) => s.id)).size,
      acceptedWithoutEmail: sent.filter((s) => !stored.has(s.id)).length,
      stuckKeys: stuck.length,
      undelivered: await notDelivered(),
      deliveredTwice: [...seen.values()].filter((n) => n > 1).length,
      messagesDeliveredTwice: [...messageIds.values()].filter((n) => n > 1).length,
      deliveredWithinMs,
      backlogDeliveredMs,
      dataReceived: mta.received,
      killsAfterRepliesRead,
      restartsMs,
      campaign: campaignId ? { recipients: options.campaignRecipients!, emails: await campaignEmails(), sent: await campaignSent() } : null,
    };
  } finally {
    await child?.kill('SIGKILL');
    await app.close();
    await mta.close();
  }
}
