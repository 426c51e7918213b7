// Ids are a type prefix plus a 27-character KSUID: base62, time-ordered to the second.
import { createRequire } from 'node:module';
import { randomInt } from 'node:crypto';

const KSUID = createRequire(import.meta.url)('ksuid') as { randomSync(): { string: string } };

export function newId(prefix: string): string {
  return `${prefix}_${KSUID.randomSync().string}`;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniformly random letters and digits from the CSPRNG (for secrets and tokens). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** True when `value` has the shape of an id with one of the given prefixes. */
export function looksLikeId(value: string, ...prefixes: string[]): boolean {
  return prefixes.some((p) => value.startsWith(`${p}_`) && /^[A-Za-z0-9]{27}$/.test(value.slice(p.length + 1)));
}
