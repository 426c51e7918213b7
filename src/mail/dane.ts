// DANE for SMTP (RFC 7672): which TLSA records count, and whether the certificate chain an MX host
// presents matches them. Pure (no DNS, no sockets): src/mail/dane-dns.ts finds the records,
// src/mail/dane-connect.ts checks the peer with them.
//
// Usable for SMTP are DANE-TA(2) and DANE-EE(3), selector Cert(0) or SPKI(1), matching type
// Full(0), SHA2-256(1) or SHA2-512(2) (RFC 7672 §3.1). PKIX-TA(0) and PKIX-EE(1) depend on the
// public CAs, which SMTP clients do not share, and are unusable (RFC 7672 §3.1.3).
import { createHash, type X509Certificate } from 'node:crypto';

export interface TlsaRecord {
  usage: number;
  selector: number;
  matchingType: number;
  /** Certificate association data. */
  data: Buffer;
}

export const DANE_TA = 2;
export const DANE_EE = 3;

const DIGEST_LENGTH: Record<number, number> = { 1: 32, 2: 64 };

/** The records an SMTP client can use; an RRset with none of them is "unusable". */
export function usableTlsa(records: TlsaRecord[]): TlsaRecord[] {
  return records.filter(
    (record) =>
      (record.usage === DANE_TA || record.usage === DANE_EE) &&
      (record.selector === 0 || record.selector === 1) &&
      (record.matchingType === 0 ? record.data.length > 0 : record.data.length === DIGEST_LENGTH[record.matchingType]),
  );
}

function selected(cert: X509Certificate, selector: number): Buffer {
  return selector === 0 ? cert.raw : cert.publicKey.export({ type: 'spki', format: 'der' });
}

function associated(data: Buffer, matchingType: number): Buffer {
  if (matchingType === 1) return createHash('sha256').update(data).digest();
  if (matchingType === 2) return createHash('sha512').update(data).digest();
  return data;
}

/** True when `record` designates `cert` (its certificate or its public key). */
export function tlsaMatches(record: TlsaRecord, cert: X509Certificate): boolean {
  return associated(selected(cert, record.selector), record.matchingType).equals(record.data);
}

/** The TLSA record for `cert` (e.g. `3 1 1` = DANE-EE, public key, SHA2-256): what an operator publishes. */
export function tlsaFor(cert: X509Certificate, usage: number, selector: number, matchingType: number): TlsaRecord {
  return { usage, selector, matchingType, data: associated(selected(cert, selector), matchingType) };
}

export type DaneVerdict = { ok: true; usage: 'DANE-EE' | 'DANE-TA' } | { ok: false; reason: string };

const within = (cert: X509Certificate, now: number) => Date.parse(cert.validFrom) <= now && now <= Date.parse(cert.validTo);

/**
 * Checks the chain the server presented (leaf first) against the usable records.
 * DANE-EE: the leaf matches; no name or expiry checks (RFC 7672 §3.1.1).
 * DANE-TA: a certificate of the chain matches, the leaf chains up to it (each signed by the
 * next), the certificates below it are within their validity, and the leaf names one of
 * `names` (the MX host, the recipient domain; RFC 7672 §3.2.2).
 */
export function verifyDane(records: TlsaRecord[], chain: X509Certificate[], names: string[], now = Date.now()): DaneVerdict {
  const usable = usableTlsa(records);
  if (usable.length === 0) return { ok: false, reason: 'no usable TLSA record' };
  const leaf = chain[0];
  if (!leaf) return { ok: false, reason: 'the server presented no certificate' };
  if (usable.some((record) => record.usage === DANE_EE && tlsaMatches(record, leaf))) return { ok: true, usage: 'DANE-EE' };
  const anchors = usable.filter((record) => record.usage === DANE_TA);
  const taIndex = chain.findIndex((cert) => anchors.some((record) => tlsaMatches(record, cert)));
  if (taIndex < 0) return { ok: false, reason: 'certificate matches none of the TLSA records' };
  for (let i = 0; i < taIndex; i++) {
    if (!chain[i].checkIssued(chain[i + 1]) || !chain[i].verify(chain[i + 1].publicKey)) {
      return { ok: false, reason: 'certificate chain does not lead to the DANE-TA trust anchor' };
    }
  }
  if (!chain.slice(0, Math.max(taIndex, 1)).every((cert) => within(cert, now)))
    return { ok: false, reason: 'certificate is expired or not yet valid' };
  if (!names.some((name) => leaf.checkHost(name) !== undefined))
    return { ok: false, reason: `certificate is not valid for ${names.join(' or ')}` };
  return { ok: true, usage: 'DANE-TA' };
}
