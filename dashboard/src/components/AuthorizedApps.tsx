// The apps (MCP clients and other OAuth apps) the signed-in person has authorised, each with
// a button that revokes it: every token it holds stops working at once.
import { api, ok } from '../api/client';
import { Button, ErrorBox } from './ui';
import { ListTable } from './ListTable';
import { formatDate, useAction, useLoad } from '../lib/hooks';

export function AuthorizedApps() {
  const apps = useLoad(() => ok(api.GET('/auth/apps')), []);
  const revoke = useAction();
  return (
    <section>
      <h2 id="authorized-apps">Authorized apps</h2>
      <ErrorBox error={revoke.error} />
      <ListTable
        label="Authorized apps"
        loaded={apps}
        items={(data) => data.data}
        columns={['App', 'Access', 'Workspaces', 'Authorized', 'Last used', 'Actions']}
        empty="No app is authorized to use your account."
        row={(app) => (
          <tr>
            <td>{app.name}</td>
            <td>
              {app.scope} ({app.resource === 'mcp' ? 'MCP' : 'API'})
            </td>
            <td>{app.workspace_ids.length}</td>
            <td>{formatDate(app.created_at)}</td>
            <td>{app.last_used_at ? formatDate(app.last_used_at) : 'never'}</td>
            <td>
              <Button
                kind="danger"
                aria-label={`Revoke ${app.name}`}
                busy={revoke.busy}
                onClick={async () => {
                  if (await revoke.run(() => ok(api.DELETE('/auth/apps/{id}', { params: { path: { id: app.id } } })))) await apps.reload();
                }}
              >
                Revoke
              </Button>
            </td>
          </tr>
        )}
      />
    </section>
  );
}
