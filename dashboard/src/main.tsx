// The dashboard: loads the session, then shows the page the path names (pages/index.ts), or
// the sign-in page. The accept page (invitation and first-start links) needs no session.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './styles.css';
import { api } from './api/client';
import { Layout } from './components/Layout';
import { ErrorBox, Loading } from './components/ui';
import { matchPath, navigate, usePath, visitCount } from './lib/router';
import { pages, publicPages } from './pages/index';
import { loadSession, SessionContext, type Session } from './session';
import { SignIn } from './pages/sign-in';
import { NotFound } from './pages/not-found';

// The session is asked for as soon as the script runs, and the page is mounted at once beside
// it (hidden until the session is known): the page's own requests go out in the same round trip
// as the session's instead of after it. A visitor without a session gets the sign-in page, and
// the page's refused requests are never shown.
const firstSession = loadSession();

function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  // Counts session changes after the first (sign-in, workspace switch): pages keyed by it load afresh.
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    firstSession.then(setSession, (e: Error) => setError(e.message));
  }, []);
  const update = (next: Session) => {
    setSession(next);
    setGeneration((g) => g + 1);
  };

  for (const page of publicPages) {
    const params = matchPath(page.path, path);
    if (params)
      return (
        <page.component
          params={params}
          onSignedIn={(s: Session) => {
            update(s);
            navigate('/', true);
          }}
        />
      );
  }
  if (error) return <ErrorBox error={error} />;
  if (session === null) return <SignIn onSignedIn={update} />;

  const signOut = async (everywhere = false) => {
    await api.POST(everywhere ? '/auth/sign-out-everywhere' : '/auth/sign-out');
    setSession(null);
    navigate('/', true);
  };
  let content = <NotFound />;
  for (const page of pages) {
    const params = matchPath(page.path, path);
    if (params) {
      // Keyed by the session's generation: switching workspace loads every page's data afresh.
      content = <page.component key={`${generation}:${path}:${visitCount()}`} params={params} />;
      break;
    }
  }
  return (
    <SessionContext.Provider value={session ? { session, update, signOut } : null}>
      <Layout path={path}>
        {session === undefined ? <Loading /> : null}
        <div class="page" hidden={session === undefined}>
          {content}
        </div>
      </Layout>
    </SessionContext.Provider>
  );
}

render(<App />, document.getElementById('app')!);
