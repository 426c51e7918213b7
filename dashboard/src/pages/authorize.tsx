// The OAuth consent page (/dashboard/oauth/authorize, reached from /oauth/authorize): the person
// signs in if they are not, sees which app asks and where it sends them back, picks the
// workspaces and the scope, and approves or declines. The server checks the request again on
// the decision and names where the browser goes next.
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { Button, ErrorBox, Loading } from '../components/ui';
import { useAction, useLoad } from '../lib/hooks';
import { loadSession, type Session } from '../session';
import { SignIn } from './sign-in';

const FIELDS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
  'resource',
] as const;

function requestParams(): Record<string, string> {
  const query = new URLSearchParams(location.search);
  const params: Record<string, string> = {};
  for (const field of FIELDS) {
    const value = query.get(field);
    if (value !== null) params[field] = value;
  }
  return params;
}

export function Authorize() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    loadSession().then(setSession, (e: Error) => setError(e.message));
  }, []);
  if (error) return <ErrorBox error={error} />;
  if (session === undefined) return <Loading />;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  return <Consent session={session} />;
}

function Consent({ session }: { session: Session }) {
  const params = requestParams();
  const info = useLoad(() => ok(api.GET('/oauth/authorize/request', { params: { query: params } })), []);
  const [chosen, setChosen] = useState<string[]>(
    session.workspace ? [session.workspace.id] : session.workspaces.slice(0, 1).map((w) => w.id),
  );
  const [scope, setScope] = useState<'sending' | 'full' | null>(null);
  const decision = useAction();
  if (info.error)
    return (
      <main class="auth-page" id="main">
        <div class="card auth-card">
          <h1>This request cannot be approved</h1>
          <ErrorBox error={info.error} />
        </div>
      </main>
    );
  if (!info.data) return <Loading />;
  const asked = info.data.scope as 'sending' | 'full';
  const granted = scope ?? asked;
  const decide = async (approve: boolean) => {
    const result = await decision.run(() =>
      ok(api.POST('/oauth/authorize/decision', { body: { ...params, approve, workspace_ids: chosen, granted_scope: granted } })),
    );
    if (result) location.assign(result.redirect_to);
  };
  const toggle = (id: string, on: boolean) =>
    setChosen((list) => (on ? [...list.filter((x) => x !== id), id] : list.filter((x) => x !== id)));
  return (
    <main class="auth-page" id="main">
      <form
        class="card auth-card"
        onSubmit={(e) => {
          e.preventDefault();
          void decide(true);
        }}
      >
        <h1>Authorize {info.data.client_name}</h1>
        <p>
          <strong>{info.data.client_name}</strong> wants to use Postlane{' '}
          {info.data.resource === 'mcp' ? 'as an MCP server' : 'through its API'} on your behalf ({session.user.email}). You will be sent
          back to <strong>{info.data.redirect_host}</strong>.
        </p>
        <fieldset>
          <legend>Workspaces it may use</legend>
          {session.workspaces.map((w) => (
            <label key={w.id} class="checkbox">
              <input
                type="checkbox"
                name="workspace"
                checked={chosen.includes(w.id)}
                onChange={(e) => toggle(w.id, (e.target as HTMLInputElement).checked)}
              />
              {w.name} ({w.role})
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Access</legend>
          <label class="checkbox">
            <input type="radio" name="scope" checked={granted === 'sending'} onChange={() => setScope('sending')} />
            Sending: send and forward email only
          </label>
          <label class="checkbox">
            <input
              type="radio"
              name="scope"
              disabled={asked === 'sending'}
              checked={granted === 'full'}
              onChange={() => setScope('full')}
            />
            Full: everything your role allows
          </label>
        </fieldset>
        <ErrorBox error={decision.error} />
        <div class="actions">
          <Button type="submit" kind="primary" busy={decision.busy} disabled={chosen.length === 0}>
            Approve
          </Button>
          <Button type="button" onClick={() => void decide(false)} disabled={decision.busy}>
            Decline
          </Button>
        </div>
      </form>
    </main>
  );
}
