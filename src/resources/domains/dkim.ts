// DKIM keys: one 2048-bit RSA key pair per domain. The public half is published as the p=
// of the DKIM TXT record (base64 SubjectPublicKeyInfo, what `openssl rsa -pubout` prints);
// the private half is sealed at rest and only opened to sign mail.
import { createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

export const DKIM_KEY_BITS = 2048;

export interface DkimKeyPair {
  publicKeyBase64: string;
  privateKeyPem: string;
}

export async function generateDkimKey(): Promise<DkimKeyPair> {
  const { publicKey, privateKey } = await generate('rsa', {
    modulusLength: DKIM_KEY_BITS,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKeyBase64: (publicKey as unknown as Buffer).toString('base64'), privateKeyPem: privateKey as unknown as string };
}

export function dkimRecordValue(publicKeyBase64: string): string {
  return `v=DKIM1; t=s; h=sha256; p=${publicKeyBase64}`;
}

/** `tag=value; tag=value` (DKIM and DMARC records) as a map of lowercase tags. */
export function parseTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const tag = part.slice(0, eq).trim().toLowerCase();
    if (!tags.has(tag)) tags.set(tag, part.slice(eq + 1).trim());
  }
  return tags;
}

/** The key a p= value carries (SubjectPublicKeyInfo, or a bare PKCS#1 RSAPublicKey), or null. */
export function publicKeyFromP(p: string): KeyObject | null {
  const der = Buffer.from(p.replace(/\s+/g, ''), 'base64');
  if (der.length === 0) return null;
  for (const type of ['spki', 'pkcs1'] as const) {
    try {
      return createPublicKey({ key: der, format: 'der', type });
    } catch {
      // try the next encoding
    }
  }
  return null;
}

/** True when the published p= is the same RSA key as ours (modulus and exponent compared). */
export function sameRsaKey(publishedP: string, ourPublicKeyBase64: string): boolean {
  const published = publicKeyFromP(publishedP);
  const ours = publicKeyFromP(ourPublicKeyBase64);
  if (!published || !ours || published.asymmetricKeyType !== 'rsa') return false;
  const a = published.export({ format: 'jwk' });
  const b = ours.export({ format: 'jwk' });
  return a.n === b.n && a.e === b.e;
}
