// The MCP server at /mcp: Streamable HTTP without sessions (every message is a POST answered with
// JSON; GET and DELETE answer 405), JSON-RPC 2.0 without batches (removed from the protocol in
// 2025-06-18), authorised by an OAuth access token for this resource or an API key as bearer.
// See https://emailit.com/docs/mcp/ and https://emailit.com/docs/mcp/toolsets/
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import type { AppContext } from '../../platform/context.ts';
import { bearerSecret } from '../../platform/http/auth.ts';
import { frameworkError } from '../../platform/http/errors.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { principalOfToken } from '../oauth/service.ts';
import { bearerChallenge } from '../oauth/index.ts';
import { ToolCatalog, viewOf, type Caller } from './tools.ts';

export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const SERVER_INFO = { name: 'postlane', title: 'Postlane', version: '2.0.0' };
const INSTRUCTIONS =
  "Postlane sends and tracks email. Tools mirror the REST API one to one; read a tool's description for its endpoint. " +
  'With OAuth, list-workspaces and switch-workspace choose the workspace, and every tool takes an optional workspace argument.';

type JsonRpcId = string | number | null;
const rpcError = (id: JsonRpcId, code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0' as const,
  id,
  error: { code, message, ...(data !== undefined ? { data } : {}) },
});
const rpcResult = (id: JsonRpcId, result: unknown) => ({ jsonrpc: '2.0' as const, id, result });

const JsonRpcMessage = Type.Object(
  {
    jsonrpc: Type.Literal('2.0', { description: 'Always 2.0' }),
    id: Type.Optional(
      Type.Union([Type.String(), Type.Number(), Type.Null()], { description: "The request's id (null when it could not be read)" }),
    ),
  },
  {
    additionalProperties: true,
    title: 'JsonRpcMessage',
    description: 'A JSON-RPC 2.0 response: `result`, or `error` with code and message',
  },
);
const mcpResponses = {
  200: JsonRpcMessage,
  202: Type.Null({ description: 'A notification or response was accepted' }),
  400: JsonRpcMessage,
  ...errorResponses({ 401: 'framework' }),
  405: { description: 'Only POST is served: there are no sessions or server-sent streams' },
};

async function callerOf(ctx: AppContext, request: FastifyRequest): Promise<Caller | null> {
  const secret = bearerSecret(request.headers.authorization);
  if (!secret) return null;
  if (secret.startsWith('secret_')) {
    const principal = await ctx.auth.authenticate(secret);
    return principal ? { principal, apiKey: secret } : null;
  }
  const principal = await principalOfToken(ctx, secret, 'mcp');
  return principal ? { principal, apiKey: null } : null;
}

export const resource: Resource = {
  name: 'mcp',
  async public(app, ctx) {
    let catalog: ToolCatalog | null = null;
    // JSON-RPC parse errors are answered in JSON-RPC, so this route reads its body as text (up to
    // the API's own limit: send-email may carry attachments as it does over REST).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(/^application\/([\w.+-]+\+)?json/, { parseAs: 'string' }, (_request, body, done) => done(null, body));

    const unauthorized = (reply: FastifyReply) =>
      reply
        .code(401)
        .header('www-authenticate', bearerChallenge(ctx.config.publicUrl, 'mcp'))
        .send(frameworkError(401, 'A valid OAuth access token for this MCP server or an API key is required').body);

    app.post(
      '/mcp',
      {
        config: { scope: 'public' },
        schema: {
          tags: ['MCP'],
          summary: 'MCP server (Streamable HTTP, stateless): one JSON-RPC message per POST',
          response: mcpResponses,
        },
      },
      async (request, reply) => {
        const caller = await callerOf(ctx, request);
        if (!caller) return unauthorized(reply);
        const version = request.headers['mcp-protocol-version'];
        if (typeof version === 'string' && !PROTOCOL_VERSIONS.includes(version)) {
          return reply
            .code(400)
            .send(
              rpcError(
                null,
                -32600,
                `Unsupported MCP-Protocol-Version ${version.slice(0, 40)}; supported: ${PROTOCOL_VERSIONS.join(', ')}`,
              ),
            );
        }
        let message: unknown;
        try {
          message = JSON.parse(typeof request.body === 'string' ? request.body : '');
        } catch {
          return reply.code(400).send(rpcError(null, -32700, 'Parse error: the body is not JSON'));
        }
        if (Array.isArray(message))
          return reply.code(400).send(rpcError(null, -32600, 'Batch requests are not supported: send one JSON-RPC message per POST'));
        if (!message || typeof message !== 'object' || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
          return reply.code(400).send(rpcError(null, -32600, 'Invalid request: expected a JSON-RPC 2.0 message'));
        }
        const { id, method, params } = message as { id?: unknown; method?: unknown; params?: unknown };
        // Notifications and responses to the server need no answer.
        if (typeof method !== 'string' || id === undefined) return reply.code(202).send();
        if (typeof id !== 'string' && typeof id !== 'number')
          return reply.code(400).send(rpcError(null, -32600, 'Invalid request: id must be a string or a number'));
        catalog ??= new ToolCatalog(app as unknown as FastifyInstance, ctx);
        const view = viewOf(request.headers, request.query as Record<string, unknown>);
        const args = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
        switch (method) {
          case 'initialize': {
            const asked = typeof args.protocolVersion === 'string' ? args.protocolVersion : '';
            return rpcResult(id, {
              protocolVersion: PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0],
              capabilities: { tools: { listChanged: false } },
              serverInfo: SERVER_INFO,
              instructions: INSTRUCTIONS,
            });
          }
          case 'ping':
            return rpcResult(id, {});
          // Large and fixed per view: sent as the cached JSON text, not serialized per request.
          case 'tools/list': {
            const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
            if (gzip) reply.header('content-encoding', 'gzip');
            return reply
              .type('application/json')
              .header('vary', 'accept-encoding')
              .send(catalog.listResponse(caller, view, id, gzip));
          }
          case 'tools/call': {
            if (typeof args.name !== 'string') return reply.code(200).send(rpcError(id, -32602, 'Invalid params: name is required'));
            const input = args.arguments === undefined ? {} : args.arguments;
            if (!input || typeof input !== 'object' || Array.isArray(input))
              return rpcError(id, -32602, 'Invalid params: arguments must be an object');
            const result = await catalog.call(caller, view, args.name, input as Record<string, unknown>);
            if (!result) return rpcError(id, -32602, `Unknown tool: ${args.name.slice(0, 100)}`);
            return reply.type('application/json').send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`);
          }
          default:
            return rpcError(id, -32601, `Method not found: ${method.slice(0, 100)}`);
        }
      },
    );

    const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
      reply.code(405).header('allow', 'POST').send(frameworkError(405, 'This MCP server is stateless: send each message as a POST'));
    app.get(
      '/mcp',
      {
        config: { scope: 'public' },
        schema: {
          hide: true,
          tags: ['MCP'],
          summary: 'Not served: no server-sent event stream',
          response: { 405: Type.Ref('FrameworkError') },
        },
      },
      notAllowed,
    );
    app.delete(
      '/mcp',
      {
        config: { scope: 'public' },
        schema: { hide: true, tags: ['MCP'], summary: 'Not served: there are no sessions', response: { 405: Type.Ref('FrameworkError') } },
      },
      notAllowed,
    );
  },
};
