// The start of an SMTP session with a DANE host (RFC 7672 §2.2): greeting, EHLO, STARTTLS (required:
// a host that does not offer it gets nothing), the TLS handshake and the TLSA check of the
// certificate chain. nodemailer only checks certificates the PKIX way, and Node has no hook
// between handshake and first command, so this part is ours: the verified TLS socket is then
// handed to nodemailer (its getSocket option) as an already secured connection, with the
// greeting it waits for put back in front; the session goes on with EHLO over TLS as RFC 3207
// §4.2 has it. Nothing of the message is sent before the check passed.
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type PeerCertificate, type TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { verifyDane, type TlsaRecord } from './dane.ts';

export interface DaneConnectOptions {
  address: string;
  port: number;
  /** MX host name: SNI, and the name a DANE-TA certificate must carry. */
  host: string;
  /** Other names a DANE-TA certificate may carry instead (the recipient domain). */
  alsoNames?: string[];
  heloName: string;
  /** Local address to connect from (IP pools); absent: the OS chooses. */
  localAddress?: string;
  /** null: STARTTLS is required but the certificate is not checked (only unusable TLSA records). */
  records: TlsaRecord[] | null;
  /** For connecting and everything up to the verified handshake. */
  timeoutMs: number;
}

type SmtpSetupError = Error & { code?: string; command?: string; responseCode?: number; response?: string };

function setupError(message: string, fields: { code: string; command: string; response?: string }): SmtpSetupError {
  const error: SmtpSetupError = new Error(message);
  error.code = fields.code;
  error.command = fields.command;
  if (fields.response) {
    error.response = fields.response;
    error.responseCode = Number(fields.response.slice(0, 3));
  }
  return error;
}

/** Complete SMTP replies (multi-line ones joined), one at a time. */
function replyReader(socket: Socket): { next: () => Promise<string>; stop: () => void } {
  let buffer = '';
  const lines: string[] = [];
  let waiter: ((reply: string) => void) | null = null;
  const deliver = () => {
    const end = lines.findIndex((line) => /^\d{3}(?: |$)/.test(line));
    if (end < 0 || !waiter) return;
    const reply = lines.splice(0, end + 1).join('\n');
    const resolve = waiter;
    waiter = null;
    resolve(reply);
  };
  const onData = (data: Buffer) => {
    buffer += data.toString('latin1');
    if (buffer.length > 65_536) socket.destroy(new Error('SMTP reply too long'));
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      lines.push(buffer.slice(0, newline).replace(/\r$/, ''));
      buffer = buffer.slice(newline + 1);
    }
    deliver();
  };
  socket.on('data', onData);
  return {
    next: () =>
      new Promise((resolve) => {
        waiter = resolve;
        deliver();
      }),
    stop: () => socket.off('data', onData),
  };
}

/** The chain the server presented, leaf first. */
function peerChain(socket: TLSSocket): X509Certificate[] {
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  let cert: PeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    chain.push(new X509Certificate(cert.raw));
    cert = (cert as PeerCertificate & { issuerCertificate?: PeerCertificate }).issuerCertificate;
  }
  return chain;
}

/** A TLS socket to a DANE host whose certificate matched its TLSA records; rejects with an SMTP-like error otherwise. */
export async function daneConnect(options: DaneConnectOptions): Promise<TLSSocket> {
  const { host } = options;
  const plain = connectTcp({
    host: options.address,
    port: options.port,
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
  });
  let current: Socket = plain;
  let failed: ((error: Error) => void) | null = null;
  const failure = new Promise<never>((_, reject) => {
    failed = reject;
  });
  failure.catch(() => {});
  const onError = (error: Error) =>
    failed!(
      Object.assign(error, { command: (error as SmtpSetupError).command ?? 'CONN', code: (error as SmtpSetupError).code ?? 'ECONNECTION' }),
    );
  plain.on('error', onError);
  // A server that hangs up mid-setup fails the attempt now, not when the timer runs out.
  const onClose = () =>
    failed!(setupError(`${host} closed the connection during STARTTLS setup`, { code: 'ECONNECTION', command: 'CONN' }));
  plain.once('close', onClose);
  const timer = setTimeout(
    () => current.destroy(setupError(`Connection to ${host} timed out during STARTTLS setup`, { code: 'ETIMEDOUT', command: 'CONN' })),
    options.timeoutMs,
  );
  const step = <T>(promise: Promise<T>) => Promise.race([promise, failure]);
  try {
    await step(new Promise<void>((resolve) => plain.once('connect', resolve)));
    const reader = replyReader(plain);
    const greeting = await step(reader.next());
    if (!greeting.startsWith('220'))
      throw setupError(`Greeting of ${host} was not accepted`, { code: 'EPROTOCOL', command: 'CONN', response: greeting });
    plain.write(`EHLO ${options.heloName}\r\n`);
    const ehlo = await step(reader.next());
    if (!ehlo.startsWith('250')) throw setupError(`EHLO was refused by ${host}`, { code: 'EPROTOCOL', command: 'EHLO', response: ehlo });
    if (!/^250[ -]STARTTLS\s*$/im.test(ehlo)) {
      plain.end('QUIT\r\n');
      throw setupError(`DANE: ${host} offers no STARTTLS but publishes TLSA records; not sent in the clear`, {
        code: 'ETLS',
        command: 'STARTTLS',
      });
    }
    plain.write('STARTTLS\r\n');
    const ready = await step(reader.next());
    if (!ready.startsWith('220'))
      throw setupError(`DANE: ${host} refused STARTTLS (${ready.split('\n')[0]}); not sent in the clear`, {
        code: 'ETLS',
        command: 'STARTTLS',
      });
    reader.stop();
    const secure = connectTls({ socket: plain, servername: host, rejectUnauthorized: false, minVersion: 'TLSv1.2' });
    current = secure;
    // Handshake failures are TLS failures (X.7.5), never a reason to go on in the clear.
    secure.on('error', (error: SmtpSetupError) =>
      onError(error.command ? error : Object.assign(error, { code: 'ETLS', command: 'STARTTLS' })),
    );
    await step(new Promise<void>((resolve) => secure.once('secureConnect', resolve)));
    if (options.records) {
      const verdict = verifyDane(options.records, peerChain(secure), [host, ...(options.alsoNames ?? [])]);
      if (!verdict.ok) {
        secure.destroy();
        throw setupError(`DANE: the TLS certificate of ${host} fails its TLSA records (${verdict.reason}); not sent`, {
          code: 'ETLS',
          command: 'STARTTLS',
        });
      }
    }
    plain.off('error', onError);
    plain.off('close', onClose);
    plain.on('error', () => {}); // the TLS socket reports what happens to the connection from here on
    secure.removeAllListeners('error');
    // nodemailer starts a session by waiting for a greeting: give it one, then it sends EHLO over TLS.
    secure.unshift(Buffer.from(`220 ${host} ready (DANE TLS)\r\n`));
    return secure;
  } catch (error) {
    current.destroy();
    plain.destroy();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
