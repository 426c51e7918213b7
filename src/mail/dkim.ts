// DKIM signing (RFC 6376) with mailauth: d= the sending domain, s= the service's selector,
// relaxed/relaxed canonicalization, rsa-sha256. The signature header is prepended to the raw
// message, which must not change afterwards (compose with CRLF line endings first).
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';

export interface DkimKey {
  /** d=: the domain of the From address. */
  domain: string;
  /** s=: DKIM_SELECTOR. */
  selector: string;
  /** PEM (PKCS#8 or PKCS#1) RSA private key. */
  privateKey: string;
}

export interface SignOptions {
  /** t=; defaults to now. */
  signTime?: Date;
}

/** The message with a DKIM-Signature header in front. Throws when no signature could be made. */
export async function signMessage(raw: Buffer, key: DkimKey, options: SignOptions = {}): Promise<Buffer> {
  const signature = {
    signingDomain: key.domain.toLowerCase(),
    selector: key.selector,
    privateKey: key.privateKey,
    canonicalization: 'relaxed/relaxed',
    algorithm: 'rsa-sha256',
  };
  // mailauth signs what `signatureData` lists (its top-level d=/s= fields are only defaults).
  const result = await dkimSign(raw, { ...signature, signatureData: [signature], signTime: options.signTime ?? new Date() });
  if (result.errors?.length || !result.signatures) {
    const reason = result.errors?.[0]?.err?.message ?? 'no signature produced';
    throw new Error(`DKIM signing for ${key.domain} failed: ${reason}`);
  }
  return Buffer.concat([Buffer.from(result.signatures), raw]);
}

export interface DkimKeyPair {
  /** PEM PKCS#8, to seal and store. */
  privateKey: string;
  /** Base64 DER SubjectPublicKeyInfo: the p= value of the DNS record. */
  publicKey: string;
}

/** A new 2048-bit RSA key pair (spec 002: one per domain). */
export function generateDkimKeyPair(): DkimKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'der' },
  });
  return { privateKey, publicKey: publicKey.toString('base64') };
}

/** The TXT value published at `<selector>._domainkey.<domain>` (spec 002). */
export function dkimRecordValue(publicKey: string): string {
  return `v=DKIM1; t=s; h=sha256; p=${publicKey}`;
}
