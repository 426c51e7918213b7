// Members: who belongs to this workspace and with which role; admins invite people by email
// (the link is mailed through Postlane's own delivery, and shown once here too), change roles,
// remove members and revoke invitations.
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { Badge, Button, CopyButton, ErrorBox, Field, Loading, PageHeader, Select } from '../components/ui';
import { ListTable } from '../components/ListTable';
import { formatDate, useAction, useLoad } from '../lib/hooks';
import { useOptionalSession, type SessionState } from '../session';

export function Members() {
  const state = useOptionalSession();
  if (!state) return <Loading />;
  return <MembersOf state={state} />;
}

function MembersOf({ state }: { state: SessionState }) {
  const { session } = state;
  const isAdmin = session.workspace?.role === 'admin';
  const me = session.user.id;
  const members = useLoad(() => ok(api.GET('/v2/members')), []);
  const invitations = useLoad(() => (isAdmin ? ok(api.GET('/v2/invitations')) : Promise.resolve({ data: [] })), [isAdmin]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'admin' | 'member'>('member');
  const [link, setLink] = useState<string | null>(null);
  const invite = useAction();
  const action = useAction();
  return (
    <>
      <PageHeader title="Members" />
      <ErrorBox error={action.error} />
      <ListTable
        label="Members"
        loaded={members}
        items={(data) => data.data}
        columns={['Email', 'Role', 'State', 'Joined', ...(isAdmin ? ['Actions'] : [])]}
        empty="No members."
        row={(m) => (
          <tr>
            <td>{m.email}</td>
            <td>{m.role}</td>
            <td>
              <Badge value={m.active ? 'active' : 'pending'} />
            </td>
            <td>{formatDate(m.created_at)}</td>
            {isAdmin ? (
              <td class="row-actions">
                {/* An admin does not demote themselves here: the workspace could be left with no admin to undo it. */}
                {m.id === me ? (
                  <span class="muted small-text">You</span>
                ) : (
                  <Button
                    class="small"
                    aria-label={`${m.role === 'admin' ? 'Make member' : 'Make admin'}: ${m.email}`}
                    busy={action.busy}
                    onClick={async () => {
                      const next = m.role === 'admin' ? 'member' : 'admin';
                      if (
                        await action.run(() => ok(api.POST('/v2/members/{id}', { params: { path: { id: m.id } }, body: { role: next } })))
                      )
                        await members.reload();
                    }}
                  >
                    {m.role === 'admin' ? 'Make member' : 'Make admin'}
                  </Button>
                )}
                <Button
                  class="small"
                  kind="danger"
                  aria-label={`Remove ${m.email}`}
                  busy={action.busy}
                  onClick={async () => {
                    if (!confirm(`Remove ${m.email} from this workspace?`)) return;
                    if (await action.run(() => ok(api.DELETE('/v2/members/{id}', { params: { path: { id: m.id } } }))))
                      await members.reload();
                  }}
                >
                  Remove
                </Button>
              </td>
            ) : null}
          </tr>
        )}
      />
      {isAdmin ? (
        <>
          <form
            class="card"
            onSubmit={async (e) => {
              e.preventDefault();
              setLink(null);
              const created = await invite.run(() => ok(api.POST('/v2/invitations', { body: { email, role } })));
              if (created) {
                setLink(created.url);
                setEmail('');
                await invitations.reload();
              }
            }}
          >
            <h2>Invite someone</h2>
            <Field label="Email">
              <input
                type="email"
                name="invite_email"
                required
                value={email}
                onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
              />
            </Field>
            <Select
              label="Role"
              value={role}
              onChange={(v) => setRole(v as 'admin' | 'member')}
              options={[
                ['member', 'Member'],
                ['admin', 'Admin'],
              ]}
            />
            <ErrorBox error={invite.error} />
            <Button type="submit" kind="primary" busy={invite.busy}>
              Send invitation
            </Button>
            {link ? (
              <p role="status">
                Invitation sent. The link (also in the email): <code class="wrap">{link}</code>{' '}
                <CopyButton text={link} what={`the invitation link`} />
              </p>
            ) : null}
          </form>
          <section aria-labelledby="pending-title">
            <h2 id="pending-title">Pending invitations</h2>
            {invitations.loading ? <Loading /> : null}
            <ErrorBox error={invitations.error} />
            {invitations.data && invitations.data.data.length === 0 ? <p>None.</p> : null}
            <ul class="plain-list">
              {invitations.data?.data.map((i) => (
                <li>
                  {i.email} ({i.role}), expires {formatDate(i.expires_at)}{' '}
                  <Button
                    class="small"
                    aria-label={`Revoke invitation of ${i.email}`}
                    onClick={async () => {
                      if (await action.run(() => ok(api.DELETE('/v2/invitations/{id}', { params: { path: { id: i.id } } }))))
                        await invitations.reload();
                    }}
                  >
                    Revoke
                  </Button>
                </li>
              ))}
            </ul>
          </section>
        </>
      ) : null}
    </>
  );
}
