// Environment to a typed config, validated once at start. Names are a fixed contract
// (docs/operations.md, "Configuration"); add options freely, never rename these.
import { resolve, join } from 'node:path';
import { isIP } from 'node:net';
import type { TracingSettings } from './platform/tracing-settings.ts';
import { parseIpPools, type IpPools } from './mail/ip-pools.ts';

export interface Config {
  httpHost: string;
  httpPort: number;
  dataDir: string;
  databaseUrl: string;
  publicUrl: string;
  smtpSubmissionPort: number;
  smtpSubmissionTlsPort: number | null;
  smtpTlsCert: string | null;
  smtpTlsKey: string | null;
  smtpInboundPort: number;
  /** Address both SMTP listeners bind (SMTP_HOST); defaults to HTTP_HOST. */
  smtpHost: string;
  mailHostname: string;
  dnsServers: string[];
  /** Time one DNS query waits for an answer before a retry (DNS_TIMEOUT_MS); two tries. */
  dnsTimeoutMs: number;
  mxPort: number;
  smarthostUrl: string | null;
  allowPrivateUrls: boolean;
  dkimSelector: string;
  returnPathHost: string;
  spfIncludeHost: string;
  trackingCnameTarget: string;
  inboundMxHost: string;
  rdapUrl: string | null;
  contentRetentionDays: number;
  logLevel: string;
  /** 64 hex characters sealing stored secrets; unset: DATA_DIR/encryption.key. */
  encryptionKey: string | null;
  /** How long a delivery keeps being retried after a temporary failure. */
  deliveryRetryWindowHours: number;
  /** How often webhook workers look for due deliveries queued by other processes (ms). */
  webhookPollMs: number;
  /** Longest wait of an email verification's mailbox check for a connection or a reply (ms). */
  verifySmtpTimeoutMs: number;
  /** The public addresses mail leaves from (PUBLIC_ADDRESSES); empty: the interfaces' public ones. */
  publicAddresses: string[];
  /** A domain whose MX `postlane doctor` connects to, to prove outbound port 25 is open. */
  doctorProbeDomain: string;
  /** An HTTP(S) URL whose Date header the clock is compared with; null: the check is skipped. */
  doctorTimeUrl: string | null;
  /** `postlane serve` runs the doctor after start and prints a line per blocker. */
  doctorAtStart: boolean;
  /** How long SIGTERM waits for in-flight work before handing jobs back and exiting (ms). */
  shutdownTimeoutMs: number;
  /** A port of its own for /metrics (METRICS_PORT); null: not on its own port. */
  metricsPort: number | null;
  /** A bearer token opening /metrics on the API port (METRICS_TOKEN); null: not on the API port. */
  metricsToken: string | null;
  /** OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT …); tracesUrl null: off. */
  tracing: TracingSettings;
  /** Local source addresses outbound mail leaves from, by pool (DELIVERY_IP_POOLS); none: the OS chooses. */
  ipPools: IpPools;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0, max = 65535): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function text(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? fallback : raw.trim();
}

function optional(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? null : raw.trim();
}

function flag(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0' || raw === 'no') return false;
  if (raw === 'true' || raw === '1' || raw === 'yes') return true;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function addressList(env: Env, name: string): string[] {
  const addresses = (optional(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const address of addresses)
    if (!isIP(address)) throw new ConfigError(`${name} must be a comma list of IP addresses, got "${address}"`);
  return addresses;
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(text(env, 'DATA_DIR', './data'));
  const httpPort = integer(env, 'HTTP_PORT', 3000);
  const mailHostname = text(env, 'MAIL_HOSTNAME', 'localhost');
  const databaseUrl = text(env, 'DATABASE_URL', `sqlite:${join(dataDir, 'postlane.db')}`);
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres://, postgresql:// or sqlite:');
  }
  const dnsServers = (optional(env, 'DNS_SERVERS') ?? '')
    .split(',')
    .map((server) => server.trim())
    .filter(Boolean);
  const tlsPort = integer(env, 'SMTP_SUBMISSION_TLS_PORT', 0);
  const httpHost = text(env, 'HTTP_HOST', '0.0.0.0');
  return {
    httpHost,
    httpPort,
    dataDir,
    databaseUrl,
    publicUrl: text(env, 'PUBLIC_URL', `http://localhost:${httpPort}`).replace(/\/+$/, ''),
    smtpSubmissionPort: integer(env, 'SMTP_SUBMISSION_PORT', 2587),
    smtpSubmissionTlsPort: tlsPort === 0 ? null : tlsPort,
    smtpTlsCert: optional(env, 'SMTP_TLS_CERT'),
    smtpTlsKey: optional(env, 'SMTP_TLS_KEY'),
    smtpInboundPort: integer(env, 'SMTP_INBOUND_PORT', 2525),
    smtpHost: text(env, 'SMTP_HOST', httpHost),
    mailHostname,
    dnsServers,
    dnsTimeoutMs: integer(env, 'DNS_TIMEOUT_MS', 2000, 50, 60_000),
    mxPort: integer(env, 'MX_PORT', 25, 1),
    smarthostUrl: optional(env, 'SMARTHOST_URL'),
    allowPrivateUrls: flag(env, 'ALLOW_PRIVATE_URLS'),
    dkimSelector: text(env, 'DKIM_SELECTOR', 'postlane'),
    returnPathHost: text(env, 'RETURN_PATH_HOST', `bounces.${mailHostname}`),
    spfIncludeHost: text(env, 'SPF_INCLUDE_HOST', `_spf.${mailHostname}`),
    trackingCnameTarget: text(env, 'TRACKING_CNAME_TARGET', `track.${mailHostname}`),
    inboundMxHost: text(env, 'INBOUND_MX_HOST', `inbound.${mailHostname}`),
    rdapUrl: optional(env, 'RDAP_URL'),
    contentRetentionDays: integer(env, 'CONTENT_RETENTION_DAYS', 30, 1, 3650),
    logLevel: text(env, 'LOG_LEVEL', 'info'),
    encryptionKey: optional(env, 'ENCRYPTION_KEY'),
    deliveryRetryWindowHours: integer(env, 'DELIVERY_RETRY_WINDOW_HOURS', 72, 1, 24 * 30),
    webhookPollMs: integer(env, 'WEBHOOK_POLL_MS', 1000, 10, 60_000),
    verifySmtpTimeoutMs: integer(env, 'VERIFY_SMTP_TIMEOUT_MS', 10_000, 50, 120_000),
    publicAddresses: addressList(env, 'PUBLIC_ADDRESSES'),
    doctorProbeDomain: text(env, 'DOCTOR_PROBE_DOMAIN', 'gmail.com'),
    doctorTimeUrl: /^(off|none|false)$/i.test(text(env, 'DOCTOR_TIME_URL', ''))
      ? null
      : text(env, 'DOCTOR_TIME_URL', 'https://www.google.com/'),
    doctorAtStart: env.DOCTOR_AT_START === undefined || env.DOCTOR_AT_START.trim() === '' ? true : flag(env, 'DOCTOR_AT_START'),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    metricsPort: integer(env, 'METRICS_PORT', 0) || null,
    metricsToken: optional(env, 'METRICS_TOKEN'),
    tracing: tracingSettings(env),
    ipPools: ipPools(env, mailHostname),
  };
}

function ipPools(env: Env, mailHostname: string): IpPools {
  try {
    return parseIpPools(env.DELIVERY_IP_POOLS, mailHostname);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/** The standard OpenTelemetry variables: the traces endpoint as given, or the base endpoint
 *  with /v1/traces; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn tracing off. */
function tracingSettings(env: Env): TracingSettings {
  const serviceName = text(env, 'OTEL_SERVICE_NAME', 'postlane');
  const protocol = (
    optional(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    optional(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/protobuf'
  ).toLowerCase();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (gRPC is not supported), got "${protocol}"`);
  }
  const exporter = (optional(env, 'OTEL_TRACES_EXPORTER') ?? 'otlp').toLowerCase();
  if (exporter !== 'otlp' && exporter !== 'none') throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${exporter}"`);
  const base = optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  let tracesUrl = optional(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : null);
  if (tracesUrl !== null && !/^https?:\/\/[^/]/i.test(tracesUrl))
    throw new ConfigError(`the OTLP traces endpoint must be an http:// or https:// URL, got "${tracesUrl}"`);
  if (flag(env, 'OTEL_SDK_DISABLED') || exporter === 'none') tracesUrl = null;
  return { tracesUrl, protocol, serviceName };
}
