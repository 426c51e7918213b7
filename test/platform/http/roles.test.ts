// The role rule over every operation the API documents: a member's dashboard session (with its
// CSRF token) walks each operation of /openapi.json. Each admin-only operation answers 403
// admin_role_required, documents that 403, and writes nothing (the same requests by an admin do
// write, so the check is not vacuous); every other operation is never refused for the role.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { call, signedInUser, type SignedInUser } from '../../helpers/sessions.ts';
import { NOTIFY_JOB } from '../../../src/resources/notifications/service.ts';
import { actingRole, roleRefusal } from '../../../src/platform/http/roles.ts';

let app: TestApp;

before(async () => {
  // One IP pool, so an admin's pool assignment has something to write.
  app = await startTestApp({ roles: ['api'], env: { DELIVERY_IP_POOLS: JSON.stringify({ walk: { addresses: ['127.0.0.2'] } }) } });
});
after(async () => {
  await app?.close();
});

interface Fixtures {
  keyId: string;
  doomedKeyId: string;
  memberId: string;
  otherAdminId: string;
  invitationId: string;
  trackingKeyId: string;
  doomedTrackingKeyId: string;
}

interface Call {
  params?: Record<string, string>;
  body?: unknown;
}

// The rule (the report's table): people and API keys are the admins'. In the order an admin can
// run them one after another, each against a live object, so each would write if let through.
const ADMIN_ONLY: Record<string, (f: Fixtures) => Call> = {
  'POST /v2/api-keys': () => ({ body: { name: 'walked in', scope: 'full' } }),
  'POST /v2/api-keys/{id}': (f) => ({ params: { id: f.keyId }, body: { name: 'renamed by the walk' } }),
  'POST /v2/api-keys/{id}/regenerate': (f) => ({ params: { id: f.keyId } }),
  'DELETE /v2/api-keys/{id}': (f) => ({ params: { id: f.doomedKeyId } }),
  'GET /v2/invitations': () => ({}),
  'POST /v2/invitations': () => ({ body: { email: 'outsider@elsewhere.example', role: 'admin' } }),
  'DELETE /v2/invitations/{id}': (f) => ({ params: { id: f.invitationId } }),
  'POST /v2/members/{id}': (f) => ({ params: { id: f.memberId }, body: { role: 'admin' } }),
  'DELETE /v2/members/{id}': (f) => ({ params: { id: f.otherAdminId } }),
  'POST /v2/tracking-keys': () => ({ body: { name: 'walked in' } }),
  'POST /v2/tracking-keys/{id}': (f) => ({ params: { id: f.trackingKeyId }, body: { name: 'renamed by the walk' } }),
  'DELETE /v2/tracking-keys/{id}': (f) => ({ params: { id: f.doomedTrackingKeyId } }),
  'GET /v2/system/health': () => ({}),
  'PATCH /v2/delivery/pools/assignment': () => ({ body: { all: 'walk' } }),
};

// Run last: they end the member's session.
const SESSION_ENDERS = new Set(['POST /auth/sign-out', 'POST /auth/sign-out-everywhere']);

interface Operation {
  key: string;
  method: string;
  path: string;
  hasBody: boolean;
  documents403: string;
}

async function operations(): Promise<Operation[]> {
  const document = (await (await fetch(`${app.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
  const found: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const upper = method.toUpperCase();
      found.push({
        key: `${upper} ${path}`,
        method: upper,
        path,
        hasBody: operation.requestBody !== undefined,
        documents403: JSON.stringify(operation.responses?.['403'] ?? null),
      });
    }
  }
  return found.sort((a, b) => Number(SESSION_ENDERS.has(a.key)) - Number(SESSION_ENDERS.has(b.key)));
}

const fill = (path: string, params: Record<string, string> = {}) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? 'nonexistent'));

/** What an admin-only request could change: people, sessions, keys (API and tracking), invitations and their mail, IP pool assignments. */
async function writable(): Promise<string> {
  const db = app.running.ctx.db;
  const notices = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('type', '=', NOTIFY_JOB)
    .executeTakeFirstOrThrow();
  return JSON.stringify({
    trackingKeys: await db.selectFrom('tracking_keys').select(['id', 'name', 'allowed_origins']).orderBy('id').execute(),
    keys: await db.selectFrom('api_keys').select(['id', 'name', 'scope', 'key_hash', 'deleted_at', 'updated_at']).orderBy('id').execute(),
    memberships: await db
      .selectFrom('memberships')
      .select(['user_id', 'workspace_id', 'role'])
      .orderBy('user_id')
      .orderBy('workspace_id')
      .execute(),
    invitations: await db.selectFrom('invitations').select(['id', 'email', 'role', 'accepted_at']).orderBy('id').execute(),
    sessions: await db.selectFrom('sessions').select(['id_hash', 'workspace_id']).orderBy('id_hash').execute(),
    users: await db.selectFrom('users').select(['id', 'email', 'password_hash']).orderBy('id').execute(),
    notices: Number(notices.n),
    pools: await db.selectFrom('delivery_pool_assignments').select(['id', 'pool']).orderBy('id').execute(),
  });
}

async function fixtures(admin: SignedInUser): Promise<Fixtures> {
  const made = async (name: string) => {
    const key = await admin.request('POST', '/v2/api-keys', { name });
    assert.equal(key.status, 201);
    return key.body.id as string;
  };
  const invited = await admin.request('POST', '/v2/invitations', { email: 'pending@example.org' });
  assert.equal(invited.status, 201);
  const otherAdmin = await signedInUser(app, 'second-admin@example.org', app.workspace.id, 'admin');
  const tracking = async (name: string) => {
    const key = await admin.request('POST', '/v2/tracking-keys', { name });
    assert.equal(key.status, 201);
    return key.body.id as string;
  };
  return {
    keyId: await made('kept'),
    doomedKeyId: await made('doomed'),
    memberId: '',
    otherAdminId: otherAdmin.userId,
    invitationId: invited.body.id,
    trackingKeyId: await tracking('kept'),
    doomedTrackingKeyId: await tracking('doomed'),
  };
}

test('a member walks every operation: admin-only ones answer 403 admin_role_required and write nothing, no other is refused for the role', async () => {
  const admin = await signedInUser(app, 'admin@example.org', app.workspace.id, 'admin');
  const member = await signedInUser(app, 'member@example.org', app.workspace.id, 'member');
  const f = { ...(await fixtures(admin)), memberId: member.userId };
  const all = await operations();
  const keys = new Set(all.map((op) => op.key));
  for (const key of Object.keys(ADMIN_ONLY)) assert.ok(keys.has(key), `${key} is in /openapi.json`);

  const refusedForRole: string[] = [];
  for (const op of all) {
    const adminOnly = Object.hasOwn(ADMIN_ONLY, op.key) ? ADMIN_ONLY[op.key] : undefined;
    const planned = adminOnly ? adminOnly(f) : { body: op.hasBody ? {} : undefined };
    const before = adminOnly ? await writable() : '';
    const answer = await member.request(op.method, fill(op.path, planned.params), planned.body);
    const refusedAsMember = answer.status === 403 && answer.body?.error === 'admin_role_required';
    if (refusedAsMember) refusedForRole.push(op.key);
    if (adminOnly) {
      assert.ok(refusedAsMember, `${op.key} answered a member ${answer.status}: ${answer.text.slice(0, 300)}`);
      assert.match(answer.body.message, /admin/);
      assert.equal(await writable(), before, `${op.key} refused, and nothing changed`);
      assert.match(op.documents403, /AdminRoleRequiredError/, `${op.key} documents its 403`);
    } else {
      assert.ok(!refusedAsMember, `${op.key} refused a member for the role`);
      assert.doesNotMatch(op.documents403, /AdminRoleRequiredError/, `${op.key} documents no role refusal`);
      // /mcp takes bearers only (an OAuth token or an API key), never the dashboard's cookie.
      if (!op.path.startsWith('/auth/') && op.path !== '/mcp' && !SESSION_ENDERS.has(op.key))
        assert.notEqual(answer.status, 401, `${op.key}: the member's session was taken`);
    }
  }
  assert.deepEqual(refusedForRole.sort(), Object.keys(ADMIN_ONLY).sort());

  // HEAD, which /openapi.json does not list, is refused the same way as its GET.
  const again = await signedInUser(app, 'member@example.org', app.workspace.id, 'member');
  assert.equal((await again.request('HEAD', '/v2/invitations')).status, 403);

  // The same requests by an admin go through and change what they name.
  for (const [key, plan] of Object.entries(ADMIN_ONLY)) {
    const [method, path] = key.split(' ');
    const { params, body } = plan(f);
    const before = await writable();
    const answer = await admin.request(method, fill(path, params), body);
    assert.ok(answer.status === 200 || answer.status === 201, `${key} by an admin answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    if (method !== 'GET') assert.notEqual(await writable(), before, `${key} by an admin changed something`);
  }
  // And a full API key, which speaks for the workspace, is an admin's.
  assert.equal((await call(app.url, 'GET', '/v2/invitations', undefined, { authorization: `Bearer ${app.key}` })).status, 200);
});

test("the role a principal acts with: a user's own, a member when a user credential carries none, an admin for an API key", () => {
  const base = { keyId: '', keyHash: '', workspaceId: 'wsp_x', scope: 'full' as const, sendingDomainId: null };
  assert.equal(actingRole({ ...base, keyId: 'key_x' }), 'admin');
  assert.equal(actingRole({ ...base, userId: 'usr_x', role: 'admin' }), 'admin');
  assert.equal(actingRole({ ...base, userId: 'usr_x', role: 'member' }), 'member');
  // A later credential that names its user but forgets the role is refused, not let through.
  assert.equal(actingRole({ ...base, userId: 'usr_x' }), 'member');
  assert.equal(roleRefusal({ ...base, userId: 'usr_x' }, 'admin')?.body.error, 'admin_role_required');
  assert.equal(roleRefusal(undefined, 'admin')?.status, 403, 'a route outside authentication that names a role refuses everyone');
  assert.equal(roleRefusal({ ...base, userId: 'usr_x', role: 'member' }, undefined), null);
});
