// An invitation or the first start's link: /dashboard/accept#TOKEN. The person sets a password
// (and, for the first start's link, names their address) and is signed in.
import { useState } from 'preact/hooks';
import { api, ok, setCsrfToken } from '../api/client';
import { Button, ErrorBox, Field, Loading } from '../components/ui';
import { useAction, useLoad } from '../lib/hooks';
import type { Session } from '../session';

export function Accept({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const token = location.hash.slice(1);
  const invitation = useLoad(() => ok(api.GET('/auth/invitations/{token}', { params: { path: { token } } })), [token]);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  const info = invitation.data;
  return (
    <main class="auth-page" id="main">
      <form
        class="card auth-card"
        onSubmit={async (e) => {
          e.preventDefault();
          const session = await run(() =>
            ok(
              api.POST('/auth/invitations/{token}/accept', {
                params: { path: { token } },
                body: { password, ...(info?.email ? {} : { email }) },
              }),
            ),
          );
          if (session) {
            setCsrfToken(session.csrf_token);
            history.replaceState(null, '', location.pathname);
            onSignedIn(session);
          }
        }}
      >
        <h1>Join Postlane</h1>
        {invitation.loading ? <Loading /> : null}
        <ErrorBox error={invitation.error} />
        {info ? (
          <>
            <p>
              You are joining the workspace <strong>{info.workspace_name}</strong> as {info.role === 'admin' ? 'an admin' : 'a member'}.
            </p>
            {info.email ? (
              <p>
                Account: <strong>{info.email}</strong>
              </p>
            ) : (
              <Field label="Your email">
                <input
                  type="email"
                  name="email"
                  autoComplete="username"
                  required
                  value={email}
                  onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
                />
              </Field>
            )}
            <Field
              label={info.has_password ? 'Your password' : 'Choose a password'}
              hint={info.has_password ? undefined : 'At least 10 characters'}
            >
              <input
                type="password"
                name="password"
                autoComplete={info.has_password ? 'current-password' : 'new-password'}
                required
                minLength={info.has_password ? undefined : 10}
                value={password}
                onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
              />
            </Field>
            <ErrorBox error={error} />
            <Button type="submit" kind="primary" busy={busy}>
              {info.has_password ? 'Join and sign in' : 'Set password and sign in'}
            </Button>
          </>
        ) : null}
      </form>
    </main>
  );
}
