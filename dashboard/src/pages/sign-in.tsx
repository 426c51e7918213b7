// Sign-in: email and password; the API's refusals (wrong password, too many attempts) are shown
// in its own words. When the account has had too many failed sign-ins from unknown browsers, this
// browser proves some work first, and says so while it does.
import { useState } from 'preact/hooks';
import { Button, ErrorBox, Field } from '../components/ui';
import { useAction } from '../lib/hooks';
import { signIn, type Session } from '../session';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [checking, setChecking] = useState(false);
  const { busy, error, run } = useAction();
  return (
    <main class="auth-page" id="main">
      <form
        class="card auth-card"
        onSubmit={async (e) => {
          e.preventDefault();
          const session = await run(() => signIn(email, password, () => setChecking(true)).finally(() => setChecking(false)));
          if (session) onSignedIn(session);
        }}
      >
        <h1>Sign in to Postlane</h1>
        <Field label="Email">
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
          />
        </Field>
        <Field label="Password">
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
        </Field>
        {checking && (
          <p role="status">
            Too many failed sign-ins for this account from unknown browsers: checking this browser, which can take a few seconds…
          </p>
        )}
        <ErrorBox error={error} />
        <Button type="submit" kind="primary" busy={busy}>
          Sign in
        </Button>
      </form>
    </main>
  );
}
