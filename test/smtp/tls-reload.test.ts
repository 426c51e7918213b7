// A renewed certificate (SMTP_TLS_CERT / SMTP_TLS_KEY files replaced by rename, as certbot
// and acme.sh do) reaches new sessions on every SMTP listener without a restart; open
// sessions go on; a key that does not match is refused and the last good pair kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable, type Duplex } from 'node:stream';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { pino } from 'pino';
import { createSelfSignedCertificate } from '../../src/smtp/tls.ts';
import { watchTlsFiles } from '../../src/smtp/tls-reload.ts';
import { eventually, freePort, startTestApp } from '../helpers/app.ts';

/** Resolves with the next complete SMTP reply (its last line has a space after the code). */
function readReply(socket: Duplex): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = () => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('end', onEnd);
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (/(^|\r\n)\d{3} [^\r\n]*\r\n$/.test(text)) {
        done();
        resolve(text);
      }
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const onEnd = () => {
      done();
      reject(new Error(`connection closed after: ${text}`));
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('end', onEnd);
  });
}

async function command(socket: Duplex, line: string): Promise<string> {
  const reply = readReply(socket);
  socket.write(`${line}\r\n`);
  return reply;
}

/** An SMTP session upgraded with STARTTLS (any certificate accepted: we read it, not trust it). */
async function startTls(port: number): Promise<TLSSocket> {
  const plain = tcpConnect(port, '127.0.0.1');
  await readReply(plain);
  assert.match(await command(plain, 'EHLO client.test'), /STARTTLS/);
  assert.match(await command(plain, 'STARTTLS'), /^220/);
  const secure = tlsConnect({ socket: plain, rejectUnauthorized: false, servername: 'mail.postlane.test' });
  await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
  return secure;
}

/** An implicit-TLS session (the 465-style listener), past its greeting. */
async function implicitTls(port: number): Promise<TLSSocket> {
  const secure = tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false, servername: 'mail.postlane.test' });
  const greeting = readReply(secure);
  await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
  assert.match(await greeting, /^220/);
  return secure;
}

async function serialOn(open: Promise<TLSSocket>): Promise<string> {
  const socket = await open;
  const serial = socket.getPeerCertificate().serialNumber;
  socket.destroy();
  return serial;
}

/** Writes `text` next to `file` and renames it into place (never a half-written file). */
function replace(file: string, text: string) {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

const serialOf = (cert: string) => new X509Certificate(cert).serialNumber;

function capturedLogger() {
  const lines: any[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, callback) {
        lines.push(JSON.parse(String(chunk)));
        callback();
      },
    }),
  );
  return { logger, lines, raw: () => lines.map((line) => JSON.stringify(line)).join('\n') };
}

test('renewed certificate files reach new SMTP sessions on every listener; open sessions go on; a mismatched key is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'postlane-tls-reload-'));
  const certFile = join(dir, 'fullchain.pem');
  const keyFile = join(dir, 'privkey.pem');
  const a = createSelfSignedCertificate(['a.postlane.test'], 90);
  const b = createSelfSignedCertificate(['b.postlane.test'], 60);
  writeFileSync(certFile, a.cert);
  writeFileSync(keyFile, a.key);
  const ports = { submission: await freePort(), submissionTls: await freePort(), inbound: await freePort() };
  const log = capturedLogger();
  const app = await startTestApp({
    logger: log.logger,
    env: {
      MAIL_HOSTNAME: 'mail.postlane.test',
      SMTP_SUBMISSION_PORT: String(ports.submission),
      SMTP_SUBMISSION_TLS_PORT: String(ports.submissionTls),
      SMTP_INBOUND_PORT: String(ports.inbound),
      SMTP_TLS_CERT: certFile,
      SMTP_TLS_KEY: keyFile,
      METRICS_TOKEN: 'metrics-secret',
    },
  });
  t.after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const sessions = {
    submission: () => startTls(ports.submission),
    submissionTls: () => implicitTls(ports.submissionTls),
    inbound: () => startTls(ports.inbound),
  };
  const expiry = async () => {
    const response = await fetch(`${app.url}/metrics`, { headers: { authorization: 'Bearer metrics-secret' } });
    return /^postlane_tls_certificate_expiry_seconds (\d+)$/m.exec(await response.text())?.[1];
  };

  for (const open of Object.values(sessions)) assert.equal(await serialOn(open()), serialOf(a.cert));
  assert.equal(await expiry(), String(Math.floor(Date.parse(new X509Certificate(a.cert).validTo) / 1000)));
  const old = await sessions.submission();
  t.after(() => old.destroy());

  replace(keyFile, b.key);
  replace(certFile, b.cert);
  for (const [name, open] of Object.entries(sessions)) {
    await eventually(async () => (await serialOn(open())) === serialOf(b.cert), 10_000, 100).catch(() =>
      assert.fail(`${name} still presents certificate A`),
    );
  }
  // The session opened before the renewal still works, on the certificate it started with.
  assert.match(await command(old, 'EHLO client.test'), /^250/);
  assert.equal(old.getPeerCertificate().serialNumber, serialOf(a.cert));

  const reloaded = log.lines.filter((line) => line.msg === 'TLS certificate reloaded');
  assert.equal(reloaded.length, 1, log.raw());
  assert.equal(reloaded[0].level, 30);
  assert.equal(reloaded[0].subject, 'CN=b.postlane.test');
  assert.equal(reloaded[0].cert_file, certFile);
  assert.equal(reloaded[0].key_file, keyFile);
  assert.equal(reloaded[0].expires_at, new Date(new X509Certificate(b.cert).validTo).toISOString());
  assert.equal(await expiry(), String(Math.floor(Date.parse(new X509Certificate(b.cert).validTo) / 1000)));

  // A key from elsewhere (a renewal caught half-way, a wrong copy): refused, B stays.
  replace(keyFile, createSelfSignedCertificate(['c.postlane.test']).key);
  const warning = await eventually(async () => log.lines.find((line) => /cannot be used/.test(line.msg)), 15_000, 100);
  assert.equal(warning.level, 40);
  assert.match(warning.error, /SMTP_TLS_KEY does not match/);
  for (const open of Object.values(sessions)) assert.equal(await serialOn(open()), serialOf(b.cert));
  assert.doesNotMatch(log.raw(), /PRIVATE KEY/, 'no key material in the log');
  assert.equal(log.lines.filter((line) => line.msg === 'TLS certificate reloaded').length, 1);
});

test('without fs.watch, the periodic check follows a certbot-style symlink switch', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'postlane-tls-links-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'archive'));
  mkdirSync(join(dir, 'live'));
  const pairs = [createSelfSignedCertificate(['one.postlane.test']), createSelfSignedCertificate(['two.postlane.test'])];
  pairs.forEach((pair, i) => {
    writeFileSync(join(dir, 'archive', `fullchain${i + 1}.pem`), pair.cert);
    writeFileSync(join(dir, 'archive', `privkey${i + 1}.pem`), pair.key);
  });
  const link = (name: string, target: string) => {
    symlinkSync(target, join(dir, 'live', `${name}.new`));
    renameSync(join(dir, 'live', `${name}.new`), join(dir, 'live', name));
  };
  link('fullchain.pem', '../archive/fullchain1.pem');
  link('privkey.pem', '../archive/privkey1.pem');
  const applied: string[] = [];
  const log = capturedLogger();
  const watcher = watchTlsFiles(
    { cert: join(dir, 'live', 'fullchain.pem'), key: join(dir, 'live', 'privkey.pem') },
    pairs[0],
    log.logger,
    (pair) => applied.push(pair.x509.subject),
    { useFsWatch: false, pollMs: 50, debounceMs: 20, settleMs: 50 },
  );
  t.after(() => watcher.close());

  link('fullchain.pem', '../archive/fullchain2.pem');
  link('privkey.pem', '../archive/privkey2.pem');
  await eventually(async () => applied.length > 0);
  assert.deepEqual(applied, ['CN=two.postlane.test']);
  assert.equal(log.lines.find((line) => line.msg === 'TLS certificate reloaded')?.subject, 'CN=two.postlane.test');
});
