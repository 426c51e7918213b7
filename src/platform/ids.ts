// Ids are a type prefix plus a 27-character KSUID: base62, time-ordered to the second.
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';

const KSUID = createRequire(import.meta.url)('ksuid') as { randomSync(): { string: string } };

export function newId(prefix: string): string {
  return `${prefix}_${KSUID.randomSync().string}`;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniformly random letters and digits from the CSPRNG (for secrets and tokens): one
 *  random-bytes call, rejection sampling keeps it unbiased (248 = 4 × 62). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHANUMERIC[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** True when `value` has the shape of an id with one of the given prefixes. */
export function looksLikeId(value: string, ...prefixes: string[]): boolean {
  return prefixes.some((p) => value.startsWith(`${p}_`) && /^[A-Za-z0-9]{27}$/.test(value.slice(p.length + 1)));
}
