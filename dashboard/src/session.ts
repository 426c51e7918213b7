// Who is signed in: loaded once from /auth/session, shared with every page through context.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
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

export async function signIn(email: string, password: string): Promise<Session> {
  const session = await ok(api.POST('/auth/sign-in', { body: { email, password } }));
  setCsrfToken(session.csrf_token);
  return session;
}
