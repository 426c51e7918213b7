// The SMTP certificate: receivers use STARTTLS opportunistically and accept any certificate,
// but submission clients and MTA-STS senders check it, and an expired one breaks them. The
// files are read on every run, so a renewal shows at once (the listeners reload them too);
// a key on disk that does not match the certificate is what the listeners would refuse.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fail, pass, warn, type DoctorCheck } from './types.ts';

export const CERTIFICATE_MIN_DAYS = 14;
const DAY_MS = 24 * 60 * 60 * 1000;

function certificateText(value: string): string {
  return value.includes('-----BEGIN') ? value.replace(/\\n/g, '\n') : readFileSync(value, 'utf8');
}

/** `certificate` and `key`: SMTP_TLS_CERT and SMTP_TLS_KEY (a file path or PEM text each). */
export function checkCertificate(certificate: string | null, key: string | null, hostname: string, nowMs = Date.now()): DoctorCheck {
  const id = 'smtp_certificate';
  if (!certificate) {
    return warn(
      id,
      'SMTP_TLS_CERT is not set: the SMTP listeners present a self-signed certificate, which mail clients on the submission port will not trust',
      `Get a certificate for ${hostname} (e.g. from Let's Encrypt) and set SMTP_TLS_CERT and SMTP_TLS_KEY to its files`,
    );
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certificateText(certificate));
  } catch (error) {
    return fail(
      id,
      `SMTP_TLS_CERT cannot be read as a PEM certificate: ${(error as Error).message}`,
      'Point SMTP_TLS_CERT at the PEM file of the certificate (full chain)',
    );
  }
  const renew = `Renew the certificate of ${hostname} (certbot renew, or your CA); Postlane picks up the new files by itself`;
  if (x509.checkHost(hostname) === undefined) {
    return fail(
      id,
      `The certificate (${x509.subject.replace(/\n/g, ', ')}; ${x509.subjectAltName ?? 'no alternative names'}) is not valid for ${hostname}`,
      `Get a certificate whose names include ${hostname}, or set MAIL_HOSTNAME to a name it covers`,
    );
  }
  const validTo = Date.parse(x509.validTo);
  if (validTo <= nowMs) return fail(id, `The certificate for ${hostname} expired on ${new Date(validTo).toISOString()}`, renew);
  if (Date.parse(x509.validFrom) > nowMs)
    return fail(
      id,
      `The certificate for ${hostname} is not valid before ${new Date(x509.validFrom).toISOString()}`,
      'Check the system clock, or use a certificate valid now',
    );
  const days = Math.floor((validTo - nowMs) / DAY_MS);
  if (validTo - nowMs < CERTIFICATE_MIN_DAYS * DAY_MS)
    return fail(id, `The certificate for ${hostname} expires in ${days} day(s), on ${new Date(validTo).toISOString()}`, renew);
  const mismatch = key ? keyMismatch(x509, key) : null;
  if (mismatch)
    return fail(
      id,
      mismatch,
      'Put the private key of this certificate in SMTP_TLS_KEY (both files from the same renewal); the listeners keep the last matching pair until then',
    );
  return pass(id, `The certificate is valid for ${hostname} until ${new Date(validTo).toISOString()} (${days} days)`);
}

function keyMismatch(x509: X509Certificate, key: string): string | null {
  try {
    return x509.checkPrivateKey(createPrivateKey(certificateText(key)))
      ? null
      : 'SMTP_TLS_KEY does not match the certificate in SMTP_TLS_CERT';
  } catch (error) {
    return `SMTP_TLS_KEY cannot be read as a PEM private key: ${(error as Error).message}`;
  }
}
