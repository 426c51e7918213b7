// Per-email envelope senders (VERP): `b+<id>.<mac>@<host>`. A bounce comes back to exactly
// that address, so the address alone says which email bounced; the MAC (HMAC-SHA256 of the id
// and host, truncated) makes forged bounces for guessed ids fail. The host is the domain's
// return-path name `<selector>.<domain>` (its MX points at RETURN_PATH_HOST and its SPF
// record includes ours, so SPF passes aligned with the From domain), or RETURN_PATH_HOST
// itself for mail without a verified domain.
import { hkdfSync, timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from '../platform/hmac.ts';

const PREFIX = 'b+';
const MAC_LENGTH = 16; // hex characters = 64 bits
const ID_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;

export interface VerpAddress {
  /** The id that was encoded (an email id such as `em_…`). */
  id: string;
  /** The host part, lowercase. */
  host: string;
}

/** A VERP key derived from the service's encryption key, so every server computes the same MACs. */
export function deriveVerpSecret(encryptionKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', encryptionKey, Buffer.alloc(0), 'postlane verp v1', 32));
}

/** `<selector>.<domain>`: the return-path name of a sending domain (https://emailit.com/docs/domains.md). */
export function returnPathDomain(domain: string, selector: string): string {
  return `${selector}.${domain}`.toLowerCase();
}

function mac(secret: Buffer | string, id: string, host: string): string {
  return hmacSha256(secret, `${id}@${host}`).toString('hex').slice(0, MAC_LENGTH);
}

/** The envelope sender for one email. Ids are letters, digits, `_` and `-` (at most 40). */
export function verpAddress(id: string, host: string, secret: Buffer | string): string {
  if (!ID_PATTERN.test(id)) throw new Error(`VERP id must match ${ID_PATTERN}, got "${id}"`);
  const lowerHost = host.trim().replace(/\.$/, '').toLowerCase();
  if (!lowerHost) throw new Error('VERP host is empty');
  return `${PREFIX}${id}.${mac(secret, id, lowerHost)}@${lowerHost}`;
}

/**
 * The id behind a VERP address, or null when the address is not one of ours or its MAC does
 * not match (a forged or mangled bounce). Accepts `<…>` brackets. The id keeps its case
 * (local parts are case-sensitive, RFC 5321 §2.4); prefix, MAC and host are compared
 * case-insensitively.
 */
export function parseVerpAddress(address: string, secret: Buffer | string): VerpAddress | null {
  const trimmed = address.trim().replace(/^<(.*)>$/, '$1');
  const at = trimmed.lastIndexOf('@');
  if (at <= 0) return null;
  const local = trimmed.slice(0, at);
  const host = trimmed
    .slice(at + 1)
    .replace(/\.$/, '')
    .toLowerCase();
  if (!host || local.slice(0, PREFIX.length).toLowerCase() !== PREFIX) return null;
  const rest = local.slice(PREFIX.length);
  const dot = rest.lastIndexOf('.');
  if (dot <= 0) return null;
  const id = rest.slice(0, dot);
  const given = rest.slice(dot + 1).toLowerCase();
  if (!ID_PATTERN.test(id) || !/^[0-9a-f]+$/.test(given) || given.length !== MAC_LENGTH) return null;
  const expected = mac(secret, id, host);
  if (!timingSafeEqual(Buffer.from(given), Buffer.from(expected))) return null;
  return { id, host };
}
