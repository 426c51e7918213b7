// Names that only this machine (or a private network) can reach: a server configured with them
// writes links and DNS records nobody else can use. `postlane serve` warns once at start and
// the dashboard shows a banner (GET /auth/session, `server.local_settings`).
import { isIP } from 'node:net';
import type { Config } from '../config.ts';

/** localhost, *.localhost, *.local, the reserved *.test/*.example/*.invalid/*.internal, loopback, private and link-local addresses, and names without a dot. */
export function isLocalName(host: string): boolean {
  const name = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (name === '') return true;
  const ip = isIP(name);
  if (ip === 4) return /^(127\.|10\.|192\.168\.|169\.254\.|0\.)/.test(name) || /^172\.(1[6-9]|2\d|3[01])\./.test(name);
  if (ip === 6) return name === '::1' || name === '::' || /^f[cd]/.test(name) || /^fe[89ab]/.test(name);
  if (!name.includes('.')) return true;
  return /\.(localhost|local|test|example|invalid|internal|lan|home\.arpa)$/.test(name);
}

export interface LocalSetting {
  variable: 'PUBLIC_URL' | 'MAIL_HOSTNAME';
  value: string;
  advice: string;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/** The settings that name this machine only, each with what to set instead. */
export function localSettings(config: Pick<Config, 'publicUrl' | 'mailHostname'>): LocalSetting[] {
  const settings: LocalSetting[] = [];
  if (isLocalName(hostOf(config.publicUrl))) {
    settings.push({
      variable: 'PUBLIC_URL',
      value: config.publicUrl,
      advice:
        'Set PUBLIC_URL to the address people and receivers reach this server at, such as https://mail.example.com: links in mail (tracking, unsubscribe, forms) point there.',
    });
  }
  if (isLocalName(config.mailHostname)) {
    settings.push({
      variable: 'MAIL_HOSTNAME',
      value: config.mailHostname,
      advice:
        "Set MAIL_HOSTNAME to this server's public DNS name, such as mail.example.com: it is the EHLO name and the host the domains' DNS records point at (bounces, SPF include, tracking, inbound).",
    });
  }
  return settings;
}

/** The hosts the domains' DNS records point at that nobody else can resolve to this server. */
export function localRecordHosts(
  config: Pick<Config, 'returnPathHost' | 'spfIncludeHost' | 'trackingCnameTarget' | 'inboundMxHost'>,
): string[] {
  return [config.returnPathHost, config.spfIncludeHost, config.trackingCnameTarget, config.inboundMxHost].filter(isLocalName);
}

/** The start-up log's one warning line; null when every name is public. */
export function localNamesWarning(config: Pick<Config, 'publicUrl' | 'mailHostname'>): string | null {
  const settings = localSettings(config);
  if (settings.length === 0) return null;
  const names = settings.map((s) => `${s.variable}=${s.value}`).join(' and ');
  return `${names} ${settings.length > 1 ? 'are local names' : 'is a local name'}: mail and links will not work beyond this machine. Set ${settings.map((s) => s.variable).join(' and ')} to this server's public name (see docs/operations.md).`;
}
