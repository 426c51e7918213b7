// The certificate of both SMTP listeners (STARTTLS and implicit TLS). SMTP_TLS_CERT and
// SMTP_TLS_KEY give one (PEM text or a file path each); otherwise a self-signed certificate
// for MAIL_HOSTNAME is made at first start and kept in DATA_DIR/smtp-tls.pem (key and
// certificate in one file, written atomically, so two processes starting together never pair
// one's key with the other's certificate). It is made with node:crypto and the small DER
// writer below: no openssl binary, no extra package.
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { ConfigError, type Config } from '../config.ts';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** Where it came from: the configured files or the generated one. */
  source: 'configured' | 'generated';
  /** The files SMTP_TLS_CERT and SMTP_TLS_KEY name (watched for renewals); null for PEM text or the generated file. */
  files: { cert: string; key: string } | null;
}

export const GENERATED_FILE = 'smtp-tls.pem';
const VALIDITY_DAYS = 3650;

// ---- DER (X.690) writer: just the types a certificate needs ----
function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, content: Buffer) => Buffer.concat([Buffer.from([tag]), length(content.length), content]);
const sequence = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const explicit = (n: number, content: Buffer) => tlv(0xa0 | n, content);
const octetString = (content: Buffer) => tlv(0x04, content);
const bitString = (content: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), content]));
const utf8String = (text: string) => tlv(0x0c, Buffer.from(text, 'utf8'));
const boolean = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0]));
const nullValue = () => Buffer.from([0x05, 0x00]);

function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1] < 0x80) start++;
  const trimmed = bytes.subarray(start);
  return tlv(0x02, trimmed[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a * 40 + b];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z'; // YYYYMMDDHHMMSSZ
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

const name = (commonName: string) => sequence(set(sequence(oid('2.5.4.3'), utf8String(commonName))));

function subjectAltNames(hosts: string[]): Buffer {
  const names = hosts.map((host) => {
    const family = isIP(host);
    if (family === 4) return tlv(0x87, Buffer.from(host.split('.').map(Number)));
    return tlv(0x82, Buffer.from(host, 'ascii')); // dNSName, IA5String
  });
  return sequence(...names);
}

const extension = (id: string, critical: boolean, value: Buffer) =>
  sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));

/** A self-signed RSA-2048 server certificate (PEM) for `hosts`, valid from now for `days`. */
export function createSelfSignedCertificate(hosts: string[], days = VALIDITY_DAYS): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const sha256WithRsa = sequence(oid('1.2.840.113549.1.1.11'), nullValue());
  const notBefore = new Date(Date.now() - 60 * 60 * 1000); // an hour of slack for skewed clocks
  const notAfter = new Date(Date.now() + days * 24 * 60 * 60 * 1000);
  const serial = randomBytes(16);
  serial[0] &= 0x7f; // positive
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    sha256WithRsa,
    name(hosts[0]),
    sequence(time(notBefore), time(notAfter)),
    name(hosts[0]),
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(
      3,
      sequence(
        extension('2.5.29.19', true, sequence()), // basicConstraints: not a CA
        extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
        extension('2.5.29.17', false, subjectAltNames(hosts)),
      ),
    ),
  );
  const signature = sign('sha256', tbs, privateKey); // RSASSA-PKCS1-v1_5
  const der = sequence(tbs, sha256WithRsa, bitString(signature));
  const base64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    cert: `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`,
  };
}

/** A configuration mistake (the CLI reports it like any other, with exit code 2). */
export class TlsConfigError extends ConfigError {}

const isPem = (value: string) => value.includes('-----BEGIN');

function pemOrFile(value: string, variable: string): string {
  if (isPem(value)) return value.replace(/\\n/g, '\n');
  try {
    return readFileSync(value, 'utf8');
  } catch (error) {
    throw new TlsConfigError(`${variable}: cannot read "${value}": ${(error as Error).message}`);
  }
}

function splitPem(pem: string): { key: string; cert: string } | null {
  const key = /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA |EC )?PRIVATE KEY-----/.exec(pem)?.[0];
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
  const certs = pem.match(cert);
  return key && certs ? { key: `${key}\n`, cert: `${certs.join('\n')}\n` } : null;
}

/** The generated certificate is still good for this host name and not (nearly) expired. */
function stillUsable(cert: string, host: string): boolean {
  try {
    const x509 = new X509Certificate(cert);
    const fresh = new Date(x509.validTo).getTime() > Date.now() + 30 * 24 * 60 * 60 * 1000;
    const matches = isIP(host) ? x509.checkIP(host) !== undefined : x509.checkHost(host) !== undefined;
    return fresh && matches;
  } catch {
    return false;
  }
}

/** A key and certificate that belong together and make a TLS context; throws TlsConfigError naming the problem. */
export function readConfiguredPair(certValue: string, keyValue: string): { key: string; cert: string; x509: X509Certificate } {
  const key = pemOrFile(keyValue, 'SMTP_TLS_KEY');
  const cert = pemOrFile(certValue, 'SMTP_TLS_CERT');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
    // The first certificate of a chain is the server's; a renewal caught between writing the
    // certificate and the key shows up here as a mismatch.
    if (!x509.checkPrivateKey(createPrivateKey(key)))
      throw new TlsConfigError('SMTP_TLS_KEY does not match the certificate in SMTP_TLS_CERT');
    createSecureContext({ key, cert });
  } catch (error) {
    if (error instanceof TlsConfigError) throw error;
    throw new TlsConfigError(`SMTP_TLS_CERT/SMTP_TLS_KEY: not a usable PEM key and certificate: ${(error as Error).message}`);
  }
  return { key, cert, x509 };
}

/** The key and certificate the SMTP listeners present. */
export function loadTlsMaterial(config: Pick<Config, 'smtpTlsCert' | 'smtpTlsKey' | 'dataDir' | 'mailHostname'>): TlsMaterial {
  if (config.smtpTlsCert || config.smtpTlsKey) {
    if (!config.smtpTlsCert || !config.smtpTlsKey) throw new TlsConfigError('SMTP_TLS_CERT and SMTP_TLS_KEY must be set together');
    const { key, cert } = readConfiguredPair(config.smtpTlsCert, config.smtpTlsKey);
    const files = isPem(config.smtpTlsCert) || isPem(config.smtpTlsKey) ? null : { cert: config.smtpTlsCert, key: config.smtpTlsKey };
    return { key, cert, source: 'configured', files };
  }
  const host = config.mailHostname;
  const file = join(config.dataDir, GENERATED_FILE);
  if (existsSync(file)) {
    const existing = splitPem(readFileSync(file, 'utf8'));
    if (existing && stillUsable(existing.cert, host)) return { ...existing, source: 'generated', files: null };
  }
  const hosts = [...new Set([host, 'localhost'])];
  const made = createSelfSignedCertificate(hosts);
  mkdirSync(config.dataDir, { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, made.key + made.cert, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
  return { ...made, source: 'generated', files: null };
}
