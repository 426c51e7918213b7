// The MCP server's protocol and tool catalog over real HTTP: one tool per operation of
// /openapi.json, annotations from each method, toolsets and read-only mode (headers winning over
// the query), what a sending credential sees, batches and GET refused, version negotiation, and
// the workspace tools of an OAuth connection.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { mcp, signedInPerson, tokensFor } from '../oauth/helpers.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app?.close());

const WORKSPACE_TOOLS = ['get-current-workspace', 'list-workspaces', 'switch-workspace', 'create-workspace'];
const list = async (bearer: string, headers: Record<string, string> = {}, query = '') => {
  const response = await mcp(app, bearer, 'tools/list', {}, headers, query);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.result.tools as Array<{
    name: string;
    description: string;
    annotations: Record<string, unknown>;
    inputSchema: any;
    outputSchema?: any;
    _meta: any;
  }>;
};

test('every operation of /openapi.json is one tool, with annotations from its method', async () => {
  const document = (await app.api.get('/openapi.json')).body;
  const operations: string[] = [];
  for (const [path, item] of Object.entries<any>(document.paths)) {
    if (!path.startsWith('/v2/')) continue;
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) if (item[method]) operations.push(`${method.toUpperCase()} ${path}`);
  }
  const tools = await list(app.key);
  const operationTools = tools.filter((t) => !WORKSPACE_TOOLS.includes(t.name));
  const covered = operationTools.map((t) => /\((\w+ \S+)\)$/.exec(t.description)![1]).sort();
  assert.deepEqual(covered, operations.sort());
  assert.equal(new Set(tools.map((t) => t.name)).size, tools.length, 'names are unique');
  for (const tool of operationTools) {
    const method = /\((\w+) \S+\)$/.exec(tool.description)![1];
    assert.equal(tool.annotations.readOnlyHint, method === 'GET', tool.name);
    assert.equal(tool.annotations.destructiveHint, method === 'DELETE', tool.name);
    assert.equal(tool.annotations.idempotentHint, method === 'GET' || method === 'DELETE' || method === 'PUT', tool.name);
    assert.equal(typeof tool.annotations.openWorldHint, 'boolean');
    assert.match(tool.name, /^[a-z]+(-[a-z0-9]+)+$/);
    assert.equal(tool.inputSchema.type, 'object');
    if (tool.outputSchema) assert.equal(tool.outputSchema.type, 'object');
  }
  const send = tools.find((t) => t.name === 'send-email')!;
  assert.ok(send.inputSchema.properties.from && send.inputSchema.properties.to && send.inputSchema.properties.subject);
  assert.equal(send.annotations.openWorldHint, true);
  assert.ok(tools.find((t) => t.name === 'get-email')!.inputSchema.required.includes('id'));
  assert.equal(
    tools.find((t) => t.name === 'list-emails')!.inputSchema.properties.workspace,
    undefined,
    'API keys take no workspace argument',
  );
});

test('toolsets and read-only mode, from headers or the query, headers winning', async () => {
  const readOnly = await list(app.key, {}, '?read_only=true');
  assert.ok(readOnly.length > 10);
  assert.deepEqual(
    readOnly.filter((t) => !t.annotations.readOnlyHint).map((t) => t.name),
    [],
  );
  for (const value of ['1', 'yes', 'on', 'TRUE'])
    assert.equal((await list(app.key, { 'x-mcp-readonly': value })).length, readOnly.length, value);
  assert.ok(
    (await list(app.key, { 'x-mcp-readonly': 'false' }, '?read_only=true')).some((t) => !t.annotations.readOnlyHint),
    'the header wins',
  );

  const some = await list(app.key, {}, '?toolsets=emails,domains');
  assert.deepEqual([...new Set(some.map((t) => t._meta?.toolset ?? 'workspace'))].sort(), ['domains', 'emails']);
  const fromHeader = await list(app.key, { 'x-mcp-toolsets': 'webhooks' }, '?toolsets=emails');
  assert.deepEqual([...new Set(fromHeader.map((t) => t._meta?.toolset))], ['webhooks']);
  assert.equal((await list(app.key, {}, '?toolsets=all')).length, (await list(app.key)).length);

  // A hidden tool does not exist for the connection: nothing runs.
  const hidden = await mcp(
    app,
    app.key,
    'tools/call',
    { name: 'create-webhook', arguments: { name: 'x', url: 'https://example.com/h' } },
    { 'x-mcp-readonly': 'true' },
  );
  assert.equal(hidden.body.error.code, -32602);
  assert.equal((await app.api.get('/v2/webhooks')).body.data.length, 0);
});

test("a sending key sees only the sending tools, and a full tool called anyway is the API's own 403", async () => {
  const key = await app.api.post('/v2/api-keys', { name: 'sender', scope: 'sending' });
  const names = (await list(key.body.key)).map((t) => t.name).sort();
  assert.deepEqual(names, ['forward-email', 'get-current-workspace', 'send-email']);
  const call = await mcp(app, key.body.key, 'tools/call', { name: 'list-emails', arguments: {} });
  assert.equal(call.body.result.isError, true);
  const error = JSON.parse(call.body.result.content[0].text);
  assert.equal(error.status, 403);
  assert.match(error.message, /"full" permission/);
});

test('protocol: version negotiation, notifications, batches and GET refused, unknown methods', async () => {
  const init = await mcp(app, app.key, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 't', version: '1' },
  });
  assert.equal(init.body.result.protocolVersion, '2025-06-18');
  assert.deepEqual(init.body.result.capabilities, { tools: { listChanged: false } });
  const future = await mcp(app, app.key, 'initialize', {
    protocolVersion: '2099-01-01',
    capabilities: {},
    clientInfo: { name: 't', version: '1' },
  });
  assert.equal(future.body.result.protocolVersion, '2025-11-25');
  const badHeader = await mcp(app, app.key, 'ping', {}, { 'mcp-protocol-version': '1999-01-01' });
  assert.equal(badHeader.status, 400);

  const post = (body: string) =>
    fetch(`${app.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${app.key}`, 'content-type': 'application/json' }, body });
  const notification = await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  assert.equal(notification.status, 202);
  const batch = await post('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
  assert.equal(batch.status, 400);
  assert.equal((await batch.json()).error.code, -32600);
  const garbage = await post('{not json');
  assert.equal((await garbage.json()).error.code, -32700);
  assert.equal((await mcp(app, app.key, 'resources/list')).body.error.code, -32601);
  const get = await fetch(`${app.url}/mcp`, { headers: { authorization: `Bearer ${app.key}`, accept: 'text/event-stream' } });
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
});

test("with OAuth: list, switch and create workspaces; another workspace's ids are 404; members are refused admin tools", async () => {
  const second = await app.newWorkspace({ name: 'second-space' });
  const outsider = await app.newWorkspace({ name: 'not-granted' });
  const person = await signedInPerson(app, [
    { id: app.workspace.id, role: 'admin' },
    { id: second.workspace.id, role: 'member' },
    { id: outsider.workspace.id, role: 'admin' },
  ]);
  const token = (
    await tokensFor(app, person, { resource: `${app.config.publicUrl}/mcp`, workspaceIds: [app.workspace.id, second.workspace.id] })
  ).access_token;
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await mcp(app, token, 'tools/call', { name, arguments: args })).body.result;

  const workspaces = (await call('list-workspaces')).structuredContent.data;
  assert.deepEqual(
    workspaces.map((w: any) => [w.id, w.role, w.current]),
    [
      [app.workspace.id, 'admin', true],
      [second.workspace.id, 'member', false],
    ].sort((a, b) => workspaces.findIndex((w: any) => w.id === a[0]) - workspaces.findIndex((w: any) => w.id === b[0])),
  );

  // The outsider's template is not reachable: its id is a 404, and its workspace is not granted.
  const template = await outsider.api.post('/v2/templates', { name: 'secret', alias: 'secret', subject: 'x', html: '<p>x</p>' });
  assert.equal(template.status, 201, template.text);
  const notFound = await call('get-template', { id: template.body.data?.id ?? template.body.id });
  assert.equal(notFound.isError, true);
  assert.equal(JSON.parse(notFound.content[0].text).status, 404);
  const notGranted = await call('list-templates', { workspace: 'not-granted' });
  assert.equal(notGranted.isError, true);
  assert.equal(JSON.parse(notGranted.content[0].text).error, 'workspace_not_found');

  // Per call by name, then for good by switching: the member role applies there.
  assert.equal((await call('get-current-workspace')).structuredContent.role, 'admin');
  const asMember = await call('list-invitations', { workspace: 'second-space' });
  assert.equal(asMember.isError, true);
  assert.equal(JSON.parse(asMember.content[0].text).error, 'admin_role_required');
  assert.equal((await call('list-invitations')).isError, undefined);
  await call('switch-workspace', { workspace: second.workspace.id });
  const now = (await call('get-current-workspace')).structuredContent;
  assert.deepEqual([now.id, now.role], [second.workspace.id, 'member']);

  const created = (await call('create-workspace', { name: 'made-by-assistant' })).structuredContent;
  assert.equal(created.role, 'admin');
  assert.ok((await call('list-workspaces')).structuredContent.data.some((w: any) => w.id === created.id));
  assert.equal((await call('list-domains', { workspace: 'made-by-assistant' })).isError, undefined);
});
