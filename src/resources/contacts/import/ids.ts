// Ids for an import's new rows, ascending: within one second a KSUID's order is its random
// payload's, so ids drawn independently land all over the id indexes. An import instead
// draws one random payload per second and counts up from it (the low 31 bits), so every
// batch appends to the indexes, and the ids of the whole import ascend. 97 random bits per
// second keep them unique beside ids made anywhere else; they are ordinary KSUIDs (the same
// format, prefix and length), only not independent of one another within an import, which
// nothing relies on (ids are not secrets: every call is scoped to its workspace).
// Within a second, each id is the previous one plus one, counted in base62 (no re-encoding).
import { randomBytes } from 'node:crypto';
import { encodeKsuid } from '../../../platform/ids.ts';

const KSUID_EPOCH_SECONDS = 1_400_000_000;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const DIGIT_VALUE = new Map([...BASE62].map((c, i) => [c.charCodeAt(0), i]));

export class AscendingIds {
  private second = -1;
  private counter = 0;
  /** The last id's 27 base62 digits, as character codes. */
  private digits: number[] = [];
  private readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  next(): string {
    const second = Math.floor(Date.now() / 1000) - KSUID_EPOCH_SECONDS;
    if (second !== this.second || this.counter >= 0xffffffff) {
      this.second = second;
      const payload = randomBytes(16);
      payload[12] &= 0x7f; // room to count up without a carry out of the last 4 bytes
      this.counter = payload.readUInt32BE(12);
      const encoded = encodeKsuid(second, payload);
      this.digits = [...encoded].map((c) => c.charCodeAt(0));
    } else {
      // The next number's base62 form is the last one's plus one (a whole-number encoding):
      // counting in base62 costs a fraction of encoding 160 bits anew.
      this.counter++;
      let i = this.digits.length - 1;
      while (this.digits[i] === 0x7a /* z */) this.digits[i--] = 0x30; // carry: z + 1 = 0
      this.digits[i] = BASE62.charCodeAt(DIGIT_VALUE.get(this.digits[i])! + 1);
    }
    return `${this.prefix}_${String.fromCharCode(...this.digits)}`;
  }
}
