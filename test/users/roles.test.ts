// Roles are the server's to enforce, over real HTTP: an admin's role change answers with the
// new role and leaves the database usable; a member cannot take the workspace over (no key of
// their own, no invitations, no promotion, no removals, no touching the admins' keys); and the
// last admin stays an admin even when two admins demote or remove each other at once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { call, signedInUser } from '../helpers/sessions.ts';

let app: TestApp;

before(async () => {
  app = await startTestApp({ roles: ['api'] });
});
after(async () => {
  await app?.close();
});

const unique = (name: string) => `${name}-${randomBytes(3).toString('hex')}@example.org`;

async function rolesIn(workspaceId: string): Promise<Array<[string, string]>> {
  const rows = await app.running.ctx.db
    .selectFrom('memberships')
    .select(['user_id', 'role'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('user_id')
    .execute();
  return rows.map((r) => [r.user_id, r.role]);
}

test('an admin changes a role: the answer carries the new role, and the database stays usable', async () => {
  const { workspace } = await app.newWorkspace();
  const admin = await signedInUser(app, unique('boss'), workspace.id, 'admin');
  const staff = await signedInUser(app, unique('staff'), workspace.id, 'member');

  const promoted = await admin.request('POST', `/v2/members/${staff.userId}`, { role: 'admin' });
  assert.equal(promoted.status, 200);
  assert.deepEqual([promoted.body.id, promoted.body.email, promoted.body.role], [staff.userId, staff.email, 'admin']);
  assert.deepEqual((await call(app.url, 'GET', '/healthz', undefined, {}, 5_000)).body, { status: 'ok' });
  assert.equal((await staff.request('GET', '/v2/invitations')).status, 200, 'the promotion holds at once');

  const demoted = await admin.request('POST', `/v2/members/${staff.userId}`, { role: 'member' });
  assert.equal(demoted.status, 200);
  assert.equal(demoted.body.role, 'member');
  const listed = (await admin.request('GET', '/v2/members')).body.data.find((m: any) => m.id === staff.userId);
  assert.equal(listed.role, 'member');
  const refused = await staff.request('GET', '/v2/invitations');
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, 'admin_role_required');
  // Unchanged role: answered all the same.
  assert.equal((await admin.request('POST', `/v2/members/${staff.userId}`, { role: 'member' })).body.role, 'member');
  assert.equal((await admin.request('POST', '/v2/members/usr_nobody', { role: 'admin' })).status, 404);
});

test('a member cannot take the workspace over, whatever the route', async () => {
  const { workspace, key: workspaceKey } = await app.newWorkspace();
  const admin = await signedInUser(app, unique('owner'), workspace.id, 'admin');
  const member = await signedInUser(app, unique('insider'), workspace.id, 'member');
  const adminKey = await admin.request('POST', '/v2/api-keys', { name: 'admin key', scope: 'full' });
  assert.equal(adminKey.status, 201);
  const before = await rolesIn(workspace.id);

  const refusals: Array<[string, string, unknown?]> = [
    ['POST', '/v2/api-keys', { name: 'my own full key', scope: 'full' }],
    ['POST', '/v2/api-keys', { name: 'my own sending key', scope: 'sending' }],
    ['GET', '/v2/invitations'],
    ['POST', '/v2/invitations', { email: 'accomplice@elsewhere.example', role: 'admin' }],
    ['POST', `/v2/members/${member.userId}`, { role: 'admin' }],
    ['DELETE', `/v2/members/${admin.userId}`],
    ['POST', `/v2/api-keys/${adminKey.body.id}`, { name: 'renamed by a member' }],
    ['POST', `/v2/api-keys/${adminKey.body.id}/regenerate`],
    ['DELETE', `/v2/api-keys/${adminKey.body.id}`],
    ['DELETE', '/v2/api-keys/Default key'.replace(' ', '%20')],
  ];
  for (const [method, path, body] of refusals) {
    const answer = await member.request(method, path, body);
    assert.equal(answer.status, 403, `${method} ${path} answered ${answer.status}: ${answer.text}`);
    assert.equal(answer.body.error, 'admin_role_required', `${method} ${path}`);
    assert.match(answer.body.message, /admin/);
  }

  assert.deepEqual(await rolesIn(workspace.id), before, 'no role changed, nobody removed');
  const invitations = await admin.request('GET', '/v2/invitations');
  assert.deepEqual(invitations.body.data, [], 'nobody was invited');
  const keys = await member.request('GET', '/v2/api-keys');
  assert.equal(keys.status, 200, 'a member may see the keys (never their secrets)');
  assert.deepEqual(keys.body.data.map((k: any) => k.name).sort(), ['Default key', 'admin key']);
  assert.ok(keys.body.data.every((k: any) => !('key' in k)));
  for (const secret of [adminKey.body.key, workspaceKey]) {
    assert.equal(
      (await call(app.url, 'GET', '/v2/api-keys', undefined, { authorization: `Bearer ${secret}` })).status,
      200,
      "the admins' keys still work",
    );
  }
  // The member still does a member's work.
  assert.equal((await member.request('POST', '/v2/suppressions', { email: 'unwanted@example.org' })).status, 201);
  assert.equal((await member.request('GET', '/v2/members')).status, 200);

  // A full key speaks for the workspace (only an admin makes one); a sending key reaches no key route.
  assert.equal((await call(app.url, 'GET', '/v2/invitations', undefined, { authorization: `Bearer ${workspaceKey}` })).status, 200);
  const sending = await admin.request('POST', '/v2/api-keys', { name: 'sending', scope: 'sending' });
  for (const [method, path, body] of [
    ['POST', '/v2/api-keys', { name: 'escalated', scope: 'full' }],
    ['GET', '/v2/api-keys'],
    ['POST', '/v2/invitations', { email: 'x@elsewhere.example' }],
  ] as const) {
    const answer = await call(app.url, method, path, body, { authorization: `Bearer ${sending.body.key}` });
    assert.equal(answer.status, 403, `${method} ${path} with a sending key`);
    assert.match(answer.body.message, /"full" permission/);
  }
  assert.equal((await admin.request('GET', '/v2/api-keys')).body.data.length, 3, 'no key was made by the refused requests');
});

test('two admins demoting each other at once leave one admin, as do two removing each other', async () => {
  for (let round = 0; round < 6; round++) {
    const { workspace } = await app.newWorkspace();
    const a = await signedInUser(app, unique('a'), workspace.id, 'admin');
    const b = await signedInUser(app, unique('b'), workspace.id, 'admin');
    const removal = round % 2 === 1;
    const [fromA, fromB] = await Promise.all(
      removal
        ? [a.request('DELETE', `/v2/members/${b.userId}`), b.request('DELETE', `/v2/members/${a.userId}`)]
        : [
            a.request('POST', `/v2/members/${b.userId}`, { role: 'member' }),
            b.request('POST', `/v2/members/${a.userId}`, { role: 'member' }),
          ],
    );
    const statuses = [fromA.status, fromB.status];
    assert.equal(
      statuses.filter((s) => s === 200).length,
      1,
      `exactly one change went through (round ${round}: ${statuses}, ${fromA.text} ${fromB.text})`,
    );
    // The other is refused: the last admin (400), no longer an admin (403), or no longer in the workspace (401).
    assert.ok(
      statuses.every((s) => [200, 400, 401, 403].includes(s)),
      String(statuses),
    );
    const admins = (await rolesIn(workspace.id)).filter(([, role]) => role === 'admin');
    assert.equal(admins.length, 1, `round ${round}: ${JSON.stringify(await rolesIn(workspace.id))}`);
  }
});
