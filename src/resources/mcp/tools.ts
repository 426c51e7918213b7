// What one MCP caller sees and runs: the catalog filtered by toolsets, read-only mode and the
// credential's scope; operation tools run by injecting the REST request into the app with the
// caller's credential (so limits, credits and scopes are exactly REST's); the workspace tools of
// an OAuth connection (https://emailit.com/docs/mcp/tools/).
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../platform/context.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { getWorkspace, createWorkspace } from '../workspaces/service.ts';
import { addMembership, membershipsOf } from '../users/service.ts';
import { addWorkspaceToGrant, delegate, inWorkspace, switchWorkspace, type TokenPrincipal } from '../oauth/service.ts';
import { annotationsFor, buildCatalog, TOOLSETS, type JsonSchema, type OperationTool, type ToolAnnotations } from './catalog.ts';

export interface Caller {
  principal: Principal;
  /** The API key itself, or null for an OAuth access token (its calls run on a delegation). */
  apiKey: string | null;
}

export interface ToolView {
  toolsets: Set<string> | 'all';
  readOnly: boolean;
}

interface WorkspaceTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
  oauthOnly: boolean;
  run(ctx: AppContext, caller: Caller, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export class ToolError extends Error {
  readonly body: Record<string, unknown>;
  constructor(body: Record<string, unknown>) {
    super(String(body.message ?? body.error));
    this.body = body;
  }
}

const isOAuth = (principal: Principal): principal is TokenPrincipal => 'grantId' in principal;

async function workspacesOf(ctx: AppContext, principal: TokenPrincipal) {
  const memberships = await membershipsOf(ctx.db, principal.userId);
  return memberships
    .filter((m) => principal.workspaceIds.includes(m.workspace_id))
    .map((m) => ({ id: m.workspace_id, name: m.workspace_name, role: m.role, current: m.workspace_id === principal.workspaceId }));
}

const workspaceArgument = {
  workspace: {
    type: 'string',
    description: 'Workspace ID or exact name to run this one call in (one you authorised); default: the current workspace',
  },
};

const WORKSPACE_TOOLS: WorkspaceTool[] = [
  {
    name: 'get-current-workspace',
    description: 'Return the workspace this connection acts on by default, your role in it and the granted scope.',
    inputSchema: { type: 'object', properties: {} },
    annotations: annotationsFor('GET', '/workspace', 'Get current workspace'),
    oauthOnly: false,
    async run(ctx, { principal }) {
      const workspace = await getWorkspace(ctx.db, principal.workspaceId);
      return {
        object: 'workspace',
        id: principal.workspaceId,
        name: workspace?.name ?? null,
        role: principal.role ?? null,
        scope: principal.scope,
      };
    },
  },
  {
    name: 'list-workspaces',
    description: 'List the workspaces this connection may use, with your role in each; `current` marks the default one.',
    inputSchema: { type: 'object', properties: {} },
    annotations: annotationsFor('GET', '/workspaces', 'List workspaces'),
    oauthOnly: true,
    async run(ctx, { principal }) {
      return { data: await workspacesOf(ctx, principal as TokenPrincipal) };
    },
  },
  {
    name: 'switch-workspace',
    description: 'Make another authorised workspace the default for every later call of this connection.',
    inputSchema: {
      type: 'object',
      properties: { workspace: { type: 'string', description: 'Workspace ID or exact name' } },
      required: ['workspace'],
    },
    annotations: { ...annotationsFor('PUT', '/workspace', 'Switch workspace'), idempotentHint: true },
    oauthOnly: true,
    async run(ctx, { principal }, args) {
      const target = await resolveWorkspace(ctx, principal as TokenPrincipal, args.workspace);
      await switchWorkspace(ctx.db, principal as TokenPrincipal, target.workspaceId);
      return { object: 'workspace', id: target.workspaceId, role: target.role, current: true };
    },
  },
  {
    name: 'create-workspace',
    description: 'Create a workspace (you become its admin) and add it to this connection.',
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', description: 'Its name', minLength: 1, maxLength: 200 } },
      required: ['name'],
    },
    annotations: annotationsFor('POST', '/workspaces', 'Create workspace'),
    oauthOnly: true,
    async run(ctx, { principal }, args) {
      const owner = principal as TokenPrincipal;
      if (typeof args.name !== 'string' || !args.name.trim()) throw new ToolError({ status: 400, error: 'name is required' });
      const { workspace } = await createWorkspace(ctx.db, { name: args.name });
      await addMembership(ctx.db, owner.userId, workspace.id, 'admin');
      await addWorkspaceToGrant(ctx.db, owner, workspace.id);
      return { object: 'workspace', id: workspace.id, name: workspace.name, role: 'admin' };
    },
  },
];

/** The caller in the workspace an argument names (ID or exact name), or a tool error. */
async function resolveWorkspace(ctx: AppContext, principal: TokenPrincipal, value: unknown): Promise<TokenPrincipal> {
  if (typeof value !== 'string' || !value) throw new ToolError({ status: 400, error: 'workspace must be a workspace ID or name' });
  const match = (await workspacesOf(ctx, principal)).find((w) => w.id === value || w.name === value);
  const moved = match ? await inWorkspace(ctx.db, principal, match.id) : null;
  if (!moved)
    throw new ToolError({ status: 404, error: 'workspace_not_found', message: `No authorised workspace is named ${value.slice(0, 100)}` });
  return moved;
}

export class ToolCatalog {
  private operations: OperationTool[] | null = null;
  private byName = new Map<string, OperationTool>();
  private readonly app: FastifyInstance;
  private readonly ctx: AppContext;
  private listCache = new Map<string, { json: string; gzip: Buffer | null }>();

  constructor(app: FastifyInstance, ctx: AppContext) {
    this.app = app;
    this.ctx = ctx;
  }

  /** Built once, on first use (the OpenAPI document exists once the app is ready). */
  all(): OperationTool[] {
    if (!this.operations) {
      this.operations = buildCatalog(this.app.swagger() as never);
      for (const tool of this.operations) this.byName.set(tool.name, tool);
    }
    return this.operations;
  }

  private visibleOperation(tool: OperationTool, caller: Caller, view: ToolView): boolean {
    if (view.toolsets !== 'all' && !view.toolsets.has(tool.toolset)) return false;
    if (view.readOnly && !tool.annotations.readOnlyHint) return false;
    // A sending or Events Only credential sees the tools of its scope only.
    if (caller.principal.scope !== 'full' && tool.scope !== caller.principal.scope) return false;
    return true;
  }

  private visibleWorkspaceTool(tool: WorkspaceTool, caller: Caller, view: ToolView): boolean {
    if (tool.oauthOnly && !isOAuth(caller.principal)) return false;
    if (view.toolsets !== 'all' && !view.toolsets.has('workspace')) return false;
    if (view.readOnly && !tool.annotations.readOnlyHint) return false;
    return true;
  }

  /**
   * The whole tools/list response for a request id as JSON text (and gzipped, for clients that
   * accept it): the list is the same for the same view, credential kind and scope, so it is built,
   * serialized and compressed once. Compressed without the id, which is written around it.
   */
  listResponse(caller: Caller, view: ToolView, id: string | number, gzip: boolean): string | Buffer {
    const entry = this.listEntry(caller, view);
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":`;
    if (!gzip) return `${head}${entry.json}}}`;
    entry.gzip ??= gzipSync(entry.json);
    // Three gzip members in a row are one valid gzip stream (RFC 1952 §2.2).
    return Buffer.concat([gzipSync(head), entry.gzip, gzipSync('}}')]);
  }

  private listEntry(caller: Caller, view: ToolView): { json: string; gzip: Buffer | null } {
    const oauth = isOAuth(caller.principal);
    const key = `${view.toolsets === 'all' ? 'all' : [...view.toolsets].sort().join(',')}|${view.readOnly}|${caller.principal.scope}|${oauth}`;
    const cached = this.listCache.get(key);
    if (cached) return cached;
    const tools: unknown[] = [];
    for (const tool of WORKSPACE_TOOLS) {
      if (!this.visibleWorkspaceTool(tool, caller, view)) continue;
      tools.push({
        name: tool.name,
        title: tool.annotations.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: tool.annotations,
      });
    }
    for (const tool of this.all()) {
      if (!this.visibleOperation(tool, caller, view)) continue;
      const inputSchema = oauth
        ? { ...tool.inputSchema, properties: { ...(tool.inputSchema.properties as object), ...workspaceArgument } }
        : tool.inputSchema;
      tools.push({
        name: tool.name,
        title: tool.annotations.title,
        description: tool.description,
        inputSchema,
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
        annotations: tool.annotations,
        _meta: { toolset: tool.toolset, scope: tool.scope },
      });
    }
    const entry = { json: JSON.stringify(tools), gzip: null };
    if (this.listCache.size > 200) this.listCache.clear();
    this.listCache.set(key, entry);
    return entry;
  }

  /** tools/call: the result as JSON text, or null when no visible tool has this name. */
  async call(caller: Caller, view: ToolView, name: string, args: Record<string, unknown>): Promise<string | null> {
    const workspaceTool = WORKSPACE_TOOLS.find((t) => t.name === name);
    if (workspaceTool) {
      if (!this.visibleWorkspaceTool(workspaceTool, caller, view)) return null;
      try {
        return success(await workspaceTool.run(this.ctx, caller, args));
      } catch (error) {
        if (error instanceof ToolError) return failure(error.body);
        throw error;
      }
    }
    this.all();
    const tool = this.byName.get(name);
    // A tool hidden by toolsets or read-only mode does not exist for this connection; one the
    // credential's scope does not reach is refused by the API itself, with its own message.
    if (!tool || (view.toolsets !== 'all' && !view.toolsets.has(tool.toolset)) || (view.readOnly && !tool.annotations.readOnlyHint))
      return null;
    try {
      return await this.runOperation(tool, caller, args);
    } catch (error) {
      if (error instanceof ToolError) return failure(error.body);
      throw error;
    }
  }

  private async runOperation(tool: OperationTool, caller: Caller, input: Record<string, unknown>): Promise<string> {
    const { workspace, ...args } = input;
    let principal = caller.principal;
    if (isOAuth(principal)) {
      if (workspace !== undefined) principal = await resolveWorkspace(this.ctx, principal, workspace);
      if (tool.adminOnly && principal.role !== 'admin') {
        throw new ToolError({ status: 403, error: 'admin_role_required', message: 'Only an admin of this workspace can use this tool' });
      }
    }
    let url = tool.path;
    for (const param of tool.pathParams) {
      const value = args[param];
      if (value === undefined || value === null || value === '') throw new ToolError({ status: 400, error: `${param} is required` });
      url = url.replace(`{${param}}`, encodeURIComponent(String(value)));
    }
    const query = new URLSearchParams();
    for (const param of tool.queryParams) {
      const value = args[param];
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const item of value) query.append(param, String(item));
      else query.set(param, typeof value === 'object' ? JSON.stringify(value) : String(value));
    }
    let payload: string | undefined;
    if (tool.body === 'wrapped' && args.body !== undefined) payload = JSON.stringify(args.body);
    else if (tool.body === 'fields') {
      const fields: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(args))
        if (!tool.pathParams.includes(key) && !tool.queryParams.includes(key)) fields[key] = value;
      payload = JSON.stringify(fields);
    }
    const delegation = caller.apiKey ? null : delegate(principal);
    try {
      const response = await this.app.inject({
        method: tool.method as 'GET',
        url: query.size ? `${url}?${query}` : url,
        headers: {
          authorization: `Bearer ${caller.apiKey ?? delegation!.credential}`,
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(payload !== undefined ? { payload } : {}),
      });
      const json = String(response.headers['content-type'] ?? '').includes('json') && response.body !== '';
      if (response.statusCode >= 400) {
        const body: unknown = json ? JSON.parse(response.body) : response.body;
        const details = body && typeof body === 'object' ? (body as Record<string, unknown>) : { error: String(body) };
        if (details.error === 'admin_required') details.error = 'admin_role_required';
        return failure({ status: response.statusCode, ...details });
      }
      // The API's own JSON goes out as it came, as text and as structured content (no re-parse).
      const text = JSON.stringify(response.body);
      if (json && response.body.startsWith('{')) return `{"content":[{"type":"text","text":${text}}],"structuredContent":${response.body}}`;
      return `{"content":[{"type":"text","text":${text}}]}`;
    } finally {
      delegation?.end();
    }
  }
}

function success(body: Record<string, unknown>): string {
  const text = JSON.stringify(body);
  return `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}}`;
}

function failure(body: Record<string, unknown>): string {
  // Text only: clients check structured content against the tool's output schema, errors included.
  return JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(body) }], isError: true });
}

/** Toolsets and read-only mode from the headers, else the query (https://emailit.com/docs/mcp/toolsets/). */
export function viewOf(headers: Record<string, string | string[] | undefined>, query: Record<string, unknown>): ToolView {
  const pick = (header: string, param: string) => {
    const fromHeader = headers[header];
    if (typeof fromHeader === 'string' && fromHeader.trim() !== '') return fromHeader;
    const fromQuery = query[param];
    return typeof fromQuery === 'string' ? fromQuery : undefined;
  };
  const toolsets = pick('x-mcp-toolsets', 'toolsets');
  const readOnly = pick('x-mcp-readonly', 'read_only');
  const names =
    toolsets
      ?.split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean) ?? [];
  return {
    toolsets: names.length === 0 || names.includes('all') ? 'all' : new Set(names),
    readOnly: readOnly !== undefined && ['true', '1', 'yes', 'on'].includes(readOnly.trim().toLowerCase()),
  };
}

export { TOOLSETS };
