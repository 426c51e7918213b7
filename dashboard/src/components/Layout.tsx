// The frame around every signed-in page: a skip link, the header with the workspace switcher
// and sign-out, the navigation built from pages/index.ts, and the page itself.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { Link } from '../lib/router';
import { navEntries } from '../pages/index';
import { useOptionalSession } from '../session';
import { ErrorBox, Loading } from './ui';
import { LocalNamesBanner } from './ServerWarnings';

export function Layout({ path, children }: { path: string; children: ComponentChildren }) {
  const state = useOptionalSession();
  const [menuOpen, setMenuOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [switching, setSwitching] = useState(false);
  const current = state?.session.workspace;
  const isAdmin = current?.role === 'admin';
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button type="button" class="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <Link href="/" class="brand">
          Postlane
        </Link>
        {state ? (
          <>
            <label class="workspace-switch">
              <span class="visually-hidden">Workspace</span>
              <select
                value={current?.id}
                onChange={async (e) => {
                  setError(null);
                  setSwitching(true);
                  try {
                    state.update(await ok(api.POST('/auth/workspace', { body: { workspace_id: (e.target as HTMLSelectElement).value } })));
                  } catch (err) {
                    setError((err as Error).message);
                  } finally {
                    setSwitching(false);
                  }
                }}
              >
                {state.session.workspaces.map((w) => (
                  <option value={w.id}>{w.name}</option>
                ))}
              </select>
            </label>
            <span class="who" title={state.session.user.email}>
              {state.session.user.email}
            </span>
            <button type="button" class="small" onClick={() => state.signOut()}>
              Sign out
            </button>
          </>
        ) : null}
      </header>
      <LocalNamesBanner />
      <ErrorBox error={error} />
      {switching ? <Loading label="Switching workspace…" /> : null}
      <div class="body">
        <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Main">
          <ul>
            {navEntries(isAdmin).map((entry) => {
              const active = entry.href === '/' ? path === '/' : path === entry.href || path.startsWith(`${entry.href}/`);
              return (
                <li>
                  <Link href={entry.href} aria-current={active ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
                    {entry.label}
                  </Link>
                </li>
              );
            })}
          </ul>
          <button type="button" class="small plain signout-all" onClick={() => state?.signOut(true)}>
            Sign out everywhere
          </button>
        </nav>
        <main id="main" tabIndex={-1}>
          {children}
        </main>
      </div>
    </div>
  );
}
