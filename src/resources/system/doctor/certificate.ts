// The SMTP certificate: receivers use STARTTLS opportunistically and accept any certificate,
// but submission clients and MTA-STS senders check it, and an expired one breaks them.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fail, pass, warn, type DoctorCheck } from './types.ts';

export const CERTIFICATE_MIN_DAYS = 14;
const DAY_MS = 24 * 60 * 60 * 1000;

function certificateText(value: string): string {
  return value.includes('-----BEGIN') ? value.replace(/\\n/g, '\n') : readFileSync(value, 'utf8');
}

export function checkCertificate(certificate: string | null, hostname: string, nowMs = Date.now()): DoctorCheck {
  const id = 'smtp_certificate';
  if (!certificate) {
    return warn(id, 'SMTP_TLS_CERT is not set: the SMTP listeners present a self-signed certificate, which mail clients on the submission port will not trust',
      `Get a certificate for ${hostname} (e.g. from Let's Encrypt) and set SMTP_TLS_CERT and SMTP_TLS_KEY to its files`);
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certificateText(certificate));
  } catch (error) {
    return fail(id, `SMTP_TLS_CERT cannot be read as a PEM certificate: ${(error as Error).message}`, 'Point SMTP_TLS_CERT at the PEM file of the certificate (full chain)');
  }
  const renew = `Renew the certificate of ${hostname} (certbot renew, or your CA) and restart Postlane`;
  if (x509.checkHost(hostname) === undefined) {
    return fail(id, `The certificate (${x509.subject.replace(/\n/g, ', ')}; ${x509.subjectAltName ?? 'no alternative names'}) is not valid for ${hostname}`,
      `Get a certificate whose names include ${hostname}, or set MAIL_HOSTNAME to a name it covers`);
  }
  const validTo = Date.parse(x509.validTo);
  if (validTo <= nowMs) return fail(id, `The certificate for ${hostname} expired on ${new Date(validTo).toISOString()}`, renew);
  if (Date.parse(x509.validFrom) > nowMs) return fail(id, `The certificate for ${hostname} is not valid before ${new Date(x509.validFrom).toISOString()}`, 'Check the system clock, or use a certificate valid now');
  const days = Math.floor((validTo - nowMs) / DAY_MS);
  if (validTo - nowMs < CERTIFICATE_MIN_DAYS * DAY_MS) return fail(id, `The certificate for ${hostname} expires in ${days} day(s), on ${new Date(validTo).toISOString()}`, renew);
  return pass(id, `The certificate is valid for ${hostname} until ${new Date(validTo).toISOString()} (${days} days)`);
}
