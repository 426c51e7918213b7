// `postlane demo`: the whole service end to end on loopback, without internet. It starts a
// DNS server and an SMTP sink (the "internet"), then Postlane itself in this process on a
// temporary SQLite database, and does what a new user would: create a workspace and a domain,
// publish the domain's records, verify it, send one email with an attachment over the API and
// one over the SMTP relay (AUTH with the API key, STARTTLS checked against the generated
// certificate), wait until both are delivered to the sink, and print what arrived (headers,
// DKIM signature and its verification) and the events. Exit 0 when all of it worked.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { pino } from 'pino';
import { loadConfig } from '../config.ts';
import { startPostlane, type RunningPostlane } from '../server.ts';
import { createResolver } from '../platform/dns.ts';
import { createWorkspace } from '../resources/workspaces/service.ts';
import { startDnsServer, type TestDnsServer } from '../dev/dns-server.ts';
import { startSmtpSink, type SmtpSink } from '../dev/smtp-sink.ts';
import { GENERATED_FILE } from '../smtp/tls.ts';

const DOMAIN = 'demo.test';
const RECIPIENT_DOMAIN = 'inbox.test';
const MAIL_HOSTNAME = 'mail.postlane.test';
const TIMEOUT_MS = 60_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

interface Api {
  (method: string, path: string, body?: unknown): Promise<any>;
}

function apiClient(url: string, key: string): Api {
  return async (method, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, deadline: number): Promise<T> {
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const headerBlock = (raw: Buffer) => {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  return (end < 0 ? text : text.slice(0, end)).replace(/\r\n/g, '\n');
};

export async function demoCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false }, keep: { type: 'boolean', default: false } } });
  const json = values.json!;
  const say = (line = '') => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  const deadline = Date.now() + TIMEOUT_MS;
  const dataDir = mkdtempSync(join(tmpdir(), 'postlane-demo-'));
  let dns: TestDnsServer | null = null;
  let sink: SmtpSink | null = null;
  let running: RunningPostlane | null = null;
  try {
    // The "internet": an authoritative DNS server and a recipient mail server, on loopback.
    dns = await startDnsServer();
    sink = await startSmtpSink({ rules: [] });
    dns.set(RECIPIENT_DOMAIN, 'MX', [{ exchange: `mx.${RECIPIENT_DOMAIN}`, priority: 10 }]);
    dns.set(`mx.${RECIPIENT_DOMAIN}`, 'A', ['127.0.0.1']);
    const submissionPort = await freePort();
    const config = loadConfig({
      DATA_DIR: dataDir,
      DATABASE_URL: `sqlite:${join(dataDir, 'postlane.db')}`,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      SMTP_SUBMISSION_PORT: String(submissionPort),
      SMTP_INBOUND_PORT: '0',
      MAIL_HOSTNAME,
      DNS_SERVERS: dns.address,
      MX_PORT: String(sink.port),
      LOG_LEVEL: 'silent',
    });
    running = await startPostlane(config, { logger: pino({ level: 'silent' }), jobPollMs: 50 });
    const url = running.url!;
    say(`Postlane is running on ${url} (temporary data in ${dataDir})`);
    say(`Loopback DNS server ${dns.address}; recipient mail server (SMTP sink) 127.0.0.1:${sink.port}`);

    const { workspace, apiKey } = await createWorkspace(running.ctx.db, { name: 'demo', plan: 'pro', credits: 100, verified: true });
    const api = apiClient(url, apiKey);
    say(`\n1. Workspace "${workspace.name}" (${workspace.id}) with a full-scope API key`);

    const domain = await api('POST', '/v2/domains', { name: DOMAIN });
    say(`2. Domain ${domain.name} (${domain.id}); its DNS records, published on the loopback DNS server:`);
    for (const record of domain.dns_records as Array<{ type: string; name: string; value: string; priority: number | null }>) {
      if (record.type === 'MX') dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
      else if (record.type === 'CNAME') dns.set(record.name, 'CNAME', [record.value]);
      else dns.set(record.name, 'TXT', [record.value]);
      const value = record.value.length > 72 ? `${record.value.slice(0, 69)}...` : record.value;
      say(`     ${record.type.padEnd(5)} ${record.name.padEnd(34)} ${value}`);
    }
    await api('POST', `/v2/domains/${domain.id}/verify`);
    const verified = await api('GET', `/v2/domains/${domain.id}`);
    if (!verified.verified_at) throw new Error(`the domain did not verify: ${JSON.stringify(verified)}`);
    say(`3. Verified at ${verified.verified_at}`);

    const viaApi = await api('POST', '/v2/emails', {
      from: `Demo <hello@${DOMAIN}>`,
      to: `Alice <alice@${RECIPIENT_DOMAIN}>`,
      subject: 'Hello from the Postlane API',
      html: '<p>This email was sent with <b>POST /v2/emails</b>.</p>',
      text: 'This email was sent with POST /v2/emails.',
      attachments: [
        {
          filename: 'hello.txt',
          content: Buffer.from('An attachment, delivered intact.\n').toString('base64'),
          content_type: 'text/plain',
        },
      ],
    });
    say(`4. Sent over the API:  ${viaApi.id}  ${viaApi.message_id}`);

    // The relay presents the certificate generated in DATA_DIR: trust exactly that one.
    const pem = readFileSync(join(dataDir, GENERATED_FILE), 'utf8');
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: submissionPort,
      requireTLS: true,
      tls: { ca: pem.slice(pem.indexOf('-----BEGIN CERTIFICATE-----')), servername: MAIL_HOSTNAME },
      auth: { user: 'demo', pass: apiKey },
    });
    const info = await transport.sendMail({
      from: `Demo <hello@${DOMAIN}>`,
      to: `Bob <bob@${RECIPIENT_DOMAIN}>`,
      subject: 'Hello from the Postlane SMTP relay',
      text: 'This email was sent over SMTP with STARTTLS and AUTH PLAIN (the API key as password).',
    });
    transport.close();
    const viaSmtp = /queued as (em_\w+)/.exec(String(info.response))?.[1];
    if (!viaSmtp) throw new Error(`unexpected SMTP reply: ${info.response}`);
    say(`5. Sent over SMTP:    ${viaSmtp}  (server said "${info.response}")`);

    const ids = [viaApi.id as string, viaSmtp];
    const emails = [];
    for (const id of ids) {
      emails.push(
        await until(
          `${id} to be delivered`,
          async () => {
            const email = await api('GET', `/v2/emails/${id}`);
            if (['bounced', 'failed'].includes(email.status)) throw new Error(`${id} ended ${email.status}: ${JSON.stringify(email)}`);
            return email.status === 'delivered' && email;
          },
          deadline,
        ),
      );
    }
    say(`6. Both delivered to the recipient's mail server.`);

    const resolver = createResolver([dns.address], { timeoutMs: 1000, tries: 1 });
    const messages = [];
    for (const message of sink.messages) {
      const dkim = await dkimVerify(message.raw, {
        resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<never>,
      });
      const result = dkim.results[0];
      messages.push({
        envelope: { mail_from: message.mailFrom, rcpt_to: message.rcptTo },
        tls: message.secure,
        headers: headerBlock(message.raw),
        dkim: result ? { result: result.status.result, domain: result.signingDomain, selector: result.selector } : { result: 'none' },
      });
    }
    for (const message of messages) {
      say(
        `\n--- received for ${message.envelope.rcpt_to.join(', ')} (envelope sender ${message.envelope.mail_from}, TLS ${message.tls ? 'yes' : 'no'}) ---`,
      );
      say(message.headers);
      say(`--- DKIM: ${message.dkim.result}${'domain' in message.dkim ? ` (d=${message.dkim.domain}, s=${message.dkim.selector})` : ''}`);
    }

    const listed = await api('GET', '/v2/events?include_data=true&limit=100');
    const events = (listed.data as Array<{ id: string; type: string; created_at: string; data?: { object?: Record<string, unknown> } }>)
      .map((event) => ({ id: event.id, type: event.type, object_id: event.data?.object?.id ?? null, created_at: event.created_at }))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    say('\nEvents:');
    for (const event of events) say(`  ${event.created_at}  ${event.type.padEnd(18)} ${event.object_id ?? ''}`);

    const allSigned = messages.length === 2 && messages.every((m) => m.dkim.result === 'pass');
    if (!allSigned)
      throw new Error(`expected two delivered messages with a passing DKIM signature, got ${JSON.stringify(messages.map((m) => m.dkim))}`);
    if (json) {
      process.stdout.write(
        `${JSON.stringify({ workspace: { id: workspace.id, name: workspace.name }, domain: { id: domain.id, name: domain.name, verified_at: verified.verified_at }, emails, messages, events }, null, 2)}\n`,
      );
    }
    say('\nDone: both messages were delivered DKIM-signed. Try it for real with `npm start`.');
    return 0;
  } finally {
    await running?.close().catch(() => {});
    await sink?.close().catch(() => {});
    await dns?.close().catch(() => {});
    if (values.keep) say(`(kept ${dataDir})`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}
