// Who is signed in: loaded once from /auth/session, shared with every page through context.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/web/sha';
import { api, ok, setCsrfToken, type Ok } from './api/client';

export type Session = Ok<'/auth/session', 'get'>;

export interface SessionState {
  session: Session;
  /** Replaces the session (after switching workspace), so every page reloads its data. */
  update(session: Session): void;
  signOut(everywhere?: boolean): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

/** The session, or null while it is still being loaded (the first load fetches it beside the page's data). */
export function useOptionalSession(): SessionState | null {
  return useContext(SessionContext);
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside a signed-in page');
  return state;
}

export async function loadSession(): Promise<Session | null> {
  const { data, response } = await api.GET('/auth/session');
  if (response.status === 401) return null;
  if (!response.ok || !data) throw new Error(`Could not load the session (${response.status})`);
  setCsrfToken(data.csrf_token);
  return data;
}

interface Proof {
  challenge: { parameters: Record<string, unknown>; signature?: string };
  solution: { counter: number; derivedKey: string };
}

/**
 * Signs in. After too many failed sign-ins on the account from browsers it does not know, the
 * API asks for proof of work (429 challenge_required): solved here (`onChallenge` tells the page
 * meanwhile), then the attempt is sent again with it.
 */
export async function signIn(email: string, password: string, onChallenge?: () => void): Promise<Session> {
  const attempt = (proof?: Proof) => api.POST('/auth/sign-in', { body: { email, password, ...(proof ? { proof } : {}) } });
  let answer = await attempt();
  const refusal = answer.response.status === 429 ? answer.error : undefined;
  if (refusal && refusal.error === 'challenge_required' && refusal.challenge) {
    onChallenge?.();
    const challenge = refusal.challenge as Proof['challenge'];
    const solution = await solveChallenge({ challenge: challenge as never, deriveKey, timeout: 120_000 });
    if (solution) answer = await attempt({ challenge, solution: { counter: solution.counter, derivedKey: solution.derivedKey } });
  }
  const session = await ok(Promise.resolve(answer));
  setCsrfToken(session.csrf_token);
  return session;
}
