// The self-hosted proof of work a public submission must carry (no third-party captcha):
// ALTCHA challenges (altcha-lib), issued with each public load and solved by the embed script
// before it submits. A challenge is signed with a secret derived from the encryption key (so
// every server sharing a database accepts it), names the form it was issued for (by its public token), expires after
// an hour, and is accepted once: its digest is stored with the submission under a unique index.
import { createHash, hkdfSync } from 'node:crypto';
import { createChallenge, randomInt, verifySolution, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';

export type { Challenge } from 'altcha-lib';

export interface Proof {
  challenge: { parameters: Record<string, unknown>; signature?: string };
  solution: { counter: number; derivedKey: string };
}

/** The counter a solver must reach: SHA-256 rounds it spends (tens of milliseconds in a browser). */
const COUNTER_MIN = 5_000;
const COUNTER_MAX = 20_000;

export type ProofRefusal = 'missing' | 'invalid' | 'expired' | 'other_form';

export class ChallengeIssuer {
  private readonly signatureSecret: string;
  private readonly keySecret: string;
  private readonly lifetimeSeconds: number;

  constructor(rootSecret: Buffer, lifetimeSeconds = 3600) {
    this.lifetimeSeconds = lifetimeSeconds;
    const derive = (label: string) => Buffer.from(hkdfSync('sha256', rootSecret, Buffer.alloc(0), label, 32)).toString('hex');
    this.signatureSecret = derive('postlane form challenge v1');
    this.keySecret = derive('postlane form challenge key v1');
  }

  /** A challenge for the form whose public token is `token` (so it dies with a rotated token). */
  issue(token: string): Promise<Challenge> {
    return createChallenge({
      algorithm: 'SHA-256',
      cost: 1,
      counter: randomInt(COUNTER_MAX, COUNTER_MIN),
      deriveKey,
      data: { form: token },
      expiresAt: Math.floor(Date.now() / 1000) + this.lifetimeSeconds,
      hmacSignatureSecret: this.signatureSecret,
      hmacKeySignatureSecret: this.keySecret,
    });
  }

  /** null when `proof` solves a challenge issued for the form of `token`, else why not. */
  async refusal(token: string, proof: Proof | undefined): Promise<ProofRefusal | null> {
    if (!proof) return 'missing';
    try {
      const result = await verifySolution({
        challenge: proof.challenge as unknown as Challenge,
        solution: proof.solution,
        deriveKey,
        hmacSignatureSecret: this.signatureSecret,
        hmacKeySignatureSecret: this.keySecret,
      });
      if (result.expired) return 'expired';
      if (!result.verified) return 'invalid';
    } catch {
      return 'invalid';
    }
    const data = proof.challenge.parameters.data as Record<string, unknown> | undefined;
    return data?.form === token ? null : 'other_form';
  }
}

/** What is stored to accept a solved challenge only once. */
export function challengeDigest(proof: Proof): string {
  return createHash('sha256').update(String(proof.challenge.signature)).digest('hex');
}
