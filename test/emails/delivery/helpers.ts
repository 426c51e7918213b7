// A Postlane that delivers to a loopback SMTP sink: the sink listens on MX_PORT, the loopback DNS
// answers MX example.org → mx.example.org → 127.0.0.1, and acme.test is a verified domain.
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { simpleParser, type ParsedMail } from 'mailparser';
import { startSendingApp, type SendingApp } from '../../helpers/sending.ts';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../../helpers/smtp-sink.ts';
import { eventually } from '../../helpers/app.ts';
import type { TestAppOptions } from '../../helpers/app.ts';
import { createResolver } from '../../../src/platform/dns.ts';
import { updateWorkspace } from '../../../src/resources/workspaces/service.ts';
import { nowMs } from '../../../src/platform/clock.ts';

export interface DeliveryApp extends SendingApp {
  sink: SmtpSink;
  /** The email row. */
  email(id: string): Promise<any>;
  /** Events whose object is (or contains) the email, oldest first. */
  eventsOf(id: string): Promise<Array<{ type: string; object: any }>>;
  attemptsOf(id: string): Promise<any[]>;
  /** The deliver job of an email, if any is left. */
  jobOf(id: string): Promise<any | undefined>;
  /** Makes the email's deliver job due now (instead of waiting for its backoff or lease). */
  makeDue(id: string): Promise<void>;
  waitForStatus(id: string, status: string, timeoutMs?: number): Promise<any>;
  /** Verifies the DKIM signature of a message against the loopback DNS. */
  verifyDkim(raw: Buffer): Promise<any>;
  parse(raw: Buffer): Promise<ParsedMail>;
}

export async function startDeliveryApp(
  options: { sink?: SmtpSinkOptions; env?: Record<string, string> } & TestAppOptions = {},
): Promise<DeliveryApp> {
  const sink = await startSmtpSink({ rules: [], ...options.sink });
  const app = await startSendingApp({ ...options, env: { MX_PORT: String(sink.port), ...options.env } });
  await app.verifiedDomain('acme.test');
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1000 });
  app.dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  app.dns.set('mx.example.org', 'A', ['127.0.0.1']);
  const db = app.running.ctx.db;
  const resolver = createResolver([app.dns.address], { timeoutMs: 1000, tries: 1 });
  const jobOf = async (id: string) =>
    db
      .selectFrom('jobs')
      .selectAll()
      .where('type', '=', 'email.deliver')
      .where('payload', '=', JSON.stringify({ email_id: id }))
      .executeTakeFirst();
  const email = (id: string) => db.selectFrom('emails').selectAll().where('id', '=', id).executeTakeFirst();
  return {
    ...app,
    sink,
    email,
    async eventsOf(id) {
      const rows = await db.selectFrom('events').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows
        .map((row) => ({ type: row.type, object: JSON.parse(row.data) }))
        .filter((event) => event.object.id === id || event.object.email?.id === id);
    },
    attemptsOf: (id) => db.selectFrom('email_attempts').selectAll().where('email_id', '=', id).orderBy('id').execute(),
    jobOf,
    async makeDue(id) {
      const job = await eventually(() => jobOf(id), 5000);
      await db
        .updateTable('jobs')
        .set({ run_at: Math.floor(nowMs()) - 1, locked_until: null, locked_by: null })
        .where('id', '=', job.id)
        .execute();
    },
    waitForStatus: (id, status, timeoutMs = 10_000) =>
      eventually(async () => {
        const row = await email(id);
        return row?.status === status && row;
      }, timeoutMs),
    verifyDkim: (raw) => dkimVerify(raw, { resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]> }),
    parse: (raw) => simpleParser(raw),
    async close() {
      await app.close();
      await sink.close();
    },
  };
}
