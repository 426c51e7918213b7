// The public endpoints as the embed script calls them, and the proof of work it solves before
// a submission (ALTCHA v2 with the browser's SHA-256, altcha-lib's solver).
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/web/sha';
import type { Definition, Step } from '../definition.ts';

export interface Challenge {
  parameters: Record<string, unknown>;
  signature?: string;
}

export interface LoadedForm {
  token: string;
  type: string;
  definition: Definition;
  challenge: Challenge;
}

export interface SubmitAnswer {
  status: number;
  body: { success_step?: Step; errors?: Record<string, string[]> };
}

export class PublicApi {
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  async load(token: string): Promise<LoadedForm> {
    const response = await fetch(`${this.base}/v2/forms/${encodeURIComponent(token)}`, { credentials: 'omit' });
    if (!response.ok) throw new Error(`load ${response.status}`);
    return response.json();
  }

  async submit(token: string, body: unknown): Promise<SubmitAnswer> {
    const response = await fetch(`${this.base}/v2/forms/${encodeURIComponent(token)}/submit`, {
      method: 'POST',
      credentials: 'omit',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json().catch(() => ({})) };
  }
}

/** The solved challenge as the submit endpoint takes it (`proof`), or null when it cannot be solved. */
export async function solve(challenge: Challenge) {
  const solution = await solveChallenge({ challenge: challenge as never, deriveKey, timeout: 60_000 });
  return solution ? { challenge, solution: { counter: solution.counter, derivedKey: solution.derivedKey } } : null;
}
