// Ids for an import's new rows, ascending: within one second a KSUID's order is its random
// payload's, so ids drawn independently land all over the id indexes. An import instead
// draws one random payload per second and counts up from it (the low 31 bits), so every
// batch appends to the indexes, and the ids of the whole import ascend. 97 random bits per
// second keep them unique beside ids made anywhere else; they are ordinary KSUIDs (the same
// format, prefix and length), only not independent of one another within an import, which
// nothing relies on (ids are not secrets: every call is scoped to its workspace).
import { randomBytes } from 'node:crypto';
import { encodeKsuid } from '../../../platform/ids.ts';

const KSUID_EPOCH_SECONDS = 1_400_000_000;

export class AscendingIds {
  private second = -1;
  private payload = Buffer.alloc(16);
  private counter = 0;
  private readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  next(): string {
    const second = Math.floor(Date.now() / 1000) - KSUID_EPOCH_SECONDS;
    if (second !== this.second || this.counter >= 0xffffffff) {
      this.second = second;
      this.payload = randomBytes(16);
      this.payload[12] &= 0x7f; // room to count up without a carry out of the last 4 bytes
      this.counter = this.payload.readUInt32BE(12);
    }
    this.payload.writeUInt32BE(this.counter++, 12);
    return `${this.prefix}_${encodeKsuid(this.second, this.payload)}`;
  }
}
