// MAIL_HOSTNAME and PUBLIC_URL must be public names: receivers look the EHLO name up, and
// links in mail must open from anywhere.
import { isIP } from 'node:net';
import { fail, pass, type DoctorCheck } from './types.ts';

const LOCAL_NAMES = /^(localhost|localhost\.localdomain|ip6-localhost)$|\.(localhost|local|internal|lan|home|test|invalid|example)$/i;

/** Why `host` is not a public DNS name, or null when it looks like one. */
export function notPublicName(host: string): string | null {
  const bare = host.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (isIP(bare)) return 'a bare IP address';
  if (LOCAL_NAMES.test(bare)) return 'a local name';
  if (!bare.includes('.')) return 'a name without a domain';
  return null;
}

export function checkMailHostname(hostname: string): DoctorCheck {
  const problem = notPublicName(hostname);
  if (!problem) return pass('mail_hostname', `MAIL_HOSTNAME is ${hostname}`);
  return fail(
    'mail_hostname',
    `MAIL_HOSTNAME is "${hostname}", ${problem}; receivers refuse or distrust mail from a host that greets with it`,
    "Set MAIL_HOSTNAME to this server's fully qualified name, e.g. mail.example.com, with an A record pointing here and a matching PTR record",
  );
}

export function checkPublicUrl(publicUrl: string): DoctorCheck {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    return fail(
      'public_url',
      `PUBLIC_URL "${publicUrl}" is not a URL`,
      'Set PUBLIC_URL to the HTTPS address of this service, e.g. https://mail.example.com',
    );
  }
  const problem = notPublicName(url.hostname);
  if (problem) {
    return fail(
      'public_url',
      `PUBLIC_URL is ${publicUrl}, whose host is ${problem}: tracking, unsubscribe and form links in mail will not open for recipients`,
      'Set PUBLIC_URL to the HTTPS address of this service behind a reverse proxy, e.g. https://mail.example.com',
    );
  }
  if (url.protocol !== 'https:') {
    return fail(
      'public_url',
      `PUBLIC_URL is ${publicUrl}, plain HTTP: one-click unsubscribe links must be HTTPS for Gmail and Yahoo`,
      'Serve Postlane behind a reverse proxy with a certificate and set PUBLIC_URL to its https:// address',
    );
  }
  return pass('public_url', `PUBLIC_URL is ${publicUrl}`);
}
