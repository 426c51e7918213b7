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

function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    loadSession().then(setSession, (e: Error) => setError(e.message));
  }, []);

  for (const page of publicPages) {
    const params = matchPath(page.path, path);
    if (params) return <page.component params={params} onSignedIn={(s: Session) => { setSession(s); navigate('/', true); }} />;
  }
  if (error) return <ErrorBox error={error} />;
  if (session === undefined) return <Loading />;
  if (session === null) return <SignIn onSignedIn={setSession} />;

  const signOut = async (everywhere = false) => {
    await api.POST(everywhere ? '/auth/sign-out-everywhere' : '/auth/sign-out');
    setSession(null);
    navigate('/', true);
  };
  let content = <NotFound />;
  for (const page of pages) {
    const params = matchPath(page.path, path);
    if (params) {
      // Keyed by workspace: switching workspace loads every page's data afresh.
      content = <page.component key={`${session.workspace?.id}:${path}:${visitCount()}`} params={params} />;
      break;
    }
  }
  return (
    <SessionContext.Provider value={{ session, update: setSession, signOut }}>
      <Layout path={path}>{content}</Layout>
    </SessionContext.Provider>
  );
}

render(<App />, document.getElementById('app')!);
