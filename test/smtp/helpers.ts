// A Postlane with both SMTP listeners on free loopback ports, a verified acme.test, and a sink
// on MX_PORT that receives everything delivered to example.org; plus small SMTP clients.
import { connect as tcpConnect } from 'node:net';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { eventually, freePort } from '../helpers/app.ts';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';

export interface SmtpApp extends SendingApp {
  sink: SmtpSink;
  ports: { submission: number; submissionTls: number; inbound: number };
  /** The email row. */
  email(id: string): Promise<any>;
  /** Events whose object is the email, oldest first. */
  eventsOf(id: string): Promise<Array<{ type: string; object: any }>>;
  waitForStatus(id: string, status: string): Promise<any>;
}

export async function startSmtpApp(env: Record<string, string> = {}): Promise<SmtpApp> {
  const sink = await startSmtpSink({ rules: [] });
  const ports = { submission: await freePort(), submissionTls: await freePort(), inbound: await freePort() };
  const app = await startSendingApp({
    env: {
      MX_PORT: String(sink.port),
      SMTP_SUBMISSION_PORT: String(ports.submission),
      SMTP_SUBMISSION_TLS_PORT: String(ports.submissionTls),
      SMTP_INBOUND_PORT: String(ports.inbound),
      ...env,
    },
  });
  await app.verifiedDomain('acme.test');
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1000 });
  app.dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  app.dns.set('mx.example.org', 'A', ['127.0.0.1']);
  const db = app.running.ctx.db;
  const email = (id: string) => db.selectFrom('emails').selectAll().where('id', '=', id).executeTakeFirst();
  return {
    ...app,
    sink,
    ports,
    email,
    async eventsOf(id) {
      const rows = await db.selectFrom('events').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows.map((row) => ({ type: row.type, object: JSON.parse(row.data) })).filter((event) => event.object.id === id);
    },
    waitForStatus: (id, status) =>
      eventually(async () => {
        const row = await email(id);
        return row?.status === status && row;
      }),
    async close() {
      await app.close();
      await sink.close();
    },
  };
}

export interface SubmitOptions {
  port: number;
  /** Implicit TLS (the SMTP_SUBMISSION_TLS_PORT listener). */
  secure?: boolean;
  /** Password; null: no AUTH at all. */
  key: string | null;
  /** Skip STARTTLS. */
  plain?: boolean;
  tls?: import('node:tls').ConnectionOptions;
  authMethod?: 'PLAIN' | 'LOGIN';
}

export interface SubmitResult {
  ok: boolean;
  /** The server's last reply line, e.g. `250 2.0.0 OK: queued as em_…`. */
  response: string;
  code: number;
  /** The command that was refused (nodemailer's names: AUTH PLAIN, MAIL FROM, RCPT TO, DATA…). */
  command?: string;
  id?: string;
  rejected: string[];
  secure?: boolean;
}

/** Sends one message through nodemailer (a real SMTP client) and reports the outcome. */
export async function submit(options: SubmitOptions, mail: Mail.Options): Promise<SubmitResult> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: options.port,
    secure: options.secure ?? false,
    requireTLS: !options.secure && !options.plain,
    ignoreTLS: options.plain ?? false,
    tls: { rejectUnauthorized: false, ...options.tls },
    auth: options.key === null ? undefined : { user: 'postlane', pass: options.key },
    authMethod: options.authMethod,
    connectionTimeout: 5000,
    greetingTimeout: 5000,
  });
  try {
    const info = await transport.sendMail(mail);
    const response = String(info.response);
    return {
      ok: true,
      response,
      code: Number(response.slice(0, 3)),
      id: /queued as (em_\w+)/.exec(response)?.[1],
      rejected: (info.rejected as string[]) ?? [],
    };
  } catch (error) {
    const e = error as { response?: string; responseCode?: number; command?: string; message: string; rejected?: string[] };
    return { ok: false, response: e.response ?? e.message, code: e.responseCode ?? 0, command: e.command, rejected: e.rejected ?? [] };
  } finally {
    transport.close();
  }
}

/** A raw SMTP conversation without TLS: writes each command, returns every reply line. */
export async function converse(port: number, commands: Array<string | Buffer>): Promise<string[]> {
  const socket = tcpConnect(port, '127.0.0.1');
  socket.setEncoding('utf8');
  let buffer = '';
  const replies: string[] = [];
  let waiting: (() => void) | null = null;
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (/^\d{3} /.test(line)) {
        replies.push(line);
        waiting?.();
      }
    }
  });
  const next = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply; got ${JSON.stringify(replies)}`)), 15_000);
      const check = () => {
        if (replies.length >= count) {
          clearTimeout(timer);
          waiting = null;
          resolve();
        }
      };
      waiting = check;
      check();
    });
  try {
    await next(1); // greeting
    for (const command of commands) {
      const expected = replies.length + 1;
      socket.write(typeof command === 'string' ? `${command}\r\n` : command);
      await next(expected);
    }
  } finally {
    socket.destroy();
  }
  return replies;
}
