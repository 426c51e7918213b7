// How many bytes of messages the delivery worker builds and sends at once. Deliveries run many
// at a time because each mostly waits (on the network, on a build thread); a few large messages
// (the API takes up to 40 MB) must not multiply that into gigabytes of copies (the composed
// MIME, its DKIM-signed bytes). Granted first come, first served; a message larger than the
// whole budget waits until it would be the only one.

export class ByteBudget {
  private used = 0;
  private readonly waiting: Array<{ bytes: number; grant(): void }> = [];
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Resolves with the function that gives the bytes back (call it exactly once). */
  async acquire(bytes: number): Promise<() => void> {
    if (this.waiting.length > 0 || !this.fits(bytes)) await new Promise<void>((grant) => this.waiting.push({ bytes, grant }));
    else this.used += bytes;
    return () => this.release(bytes);
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.limit;
  }

  private release(bytes: number): void {
    this.used -= bytes;
    while (this.waiting.length > 0 && this.fits(this.waiting[0].bytes)) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.grant();
    }
  }
}
