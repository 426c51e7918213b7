// Ids are a type prefix plus a 27-character KSUID: a 4-byte timestamp (seconds since
// 2014-05-13, the KSUID epoch) and 16 random bytes, in base62, so they sort by creation
// time to the second. Written here rather than with the `ksuid` package because ids are made
// several times per send and its generic base conversion cost ~30 µs each; the format is
// the same (a test checks ours against the package).
import { randomBytes } from 'node:crypto';

const KSUID_EPOCH_SECONDS = 1_400_000_000;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes drawn in blocks: one CSPRNG call per 256 ids.
let pool = Buffer.alloc(0);
let poolOffset = 0;
function random16(): Buffer {
  if (poolOffset + 16 > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  poolOffset += 16;
  return pool.subarray(poolOffset - 16, poolOffset);
}

/** A KSUID for `ms` (default now): 27 base62 characters. */
export function ksuid(ms: number = Date.now()): string {
  // The 160-bit number as five 32-bit words, divided by 62 repeatedly (long division).
  const random = random16();
  const words = [
    Math.floor(ms / 1000) - KSUID_EPOCH_SECONDS,
    random.readUInt32BE(0),
    random.readUInt32BE(4),
    random.readUInt32BE(8),
    random.readUInt32BE(12),
  ];
  const digits = new Array<string>(27);
  for (let i = 26; i >= 0; i--) {
    let remainder = 0;
    for (let w = 0; w < 5; w++) {
      const value = remainder * 0x1_0000_0000 + words[w];
      words[w] = Math.floor(value / 62);
      remainder = value % 62;
    }
    digits[i] = BASE62[remainder];
  }
  return digits.join('');
}

export function newId(prefix: string): string {
  return `${prefix}_${ksuid()}`;
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
