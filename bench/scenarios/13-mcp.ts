// The MCP server beside the REST API in the same run: a read tool (get-api-key) against the
// same REST call (GET /v2/api-keys/{id}), and tools/list with every toolset (aims: the tool
// call's p99 at most 1.5 times REST's; tools/list p99 under 20 ms).
import type { Scenario } from '../run.ts';
import { describeLoad, load, startPostlane } from '../lib.ts';

const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

export const scenario: Scenario = {
  name: 'mcp',
  description: 'MCP tool call vs the same REST call, and tools/list with every toolset (aims: p99 ratio <= 1.5, tools/list p99 < 20 ms)',
  async run({ seconds, connections }) {
    const postlane = await startPostlane();
    try {
      const headers = { authorization: `Bearer ${postlane.key}` };
      const list = await (await fetch(`${postlane.url}/v2/api-keys`, { headers })).json();
      const id = list.data[0].id;
      const rest = `${postlane.url}/v2/api-keys/${id}`;
      const mcpHeaders = { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const call = { method: 'POST', headers: mcpHeaders, body: rpc('tools/call', { name: 'get-api-key', arguments: { id } }) };
      // As MCP clients on fetch ask (undici sends accept-encoding: gzip, deflate): the ~400 KB list compresses well.
      const tools = { method: 'POST', headers: { ...mcpHeaders, 'accept-encoding': 'gzip' }, body: rpc('tools/list', {}) };
      const check = await (await fetch(`${postlane.url}/mcp`, call)).json();
      if (check.result?.isError || !check.result?.structuredContent) throw new Error(`tool call failed: ${JSON.stringify(check)}`);
      const count = (await (await fetch(`${postlane.url}/mcp?toolsets=all`, { ...tools, headers: mcpHeaders })).json()).result.tools.length;

      // Warm up (JIT, the catalog, caches) before measuring.
      await load(rest, { seconds: 2, connections, headers });
      await load(`${postlane.url}/mcp`, { seconds: 2, connections, ...call });
      await load(`${postlane.url}/mcp?toolsets=all`, { seconds: 2, connections, ...tools });
      const restRun = await load(rest, { seconds, connections, headers });
      const toolRun = await load(`${postlane.url}/mcp`, { seconds, connections, ...call });
      const listRun = await load(`${postlane.url}/mcp?toolsets=all`, { seconds, connections, ...tools });
      return {
        name: this.name,
        lines: [
          describeLoad('REST GET /v2/api-keys/{id}', restRun),
          describeLoad('MCP tools/call get-api-key', toolRun),
          describeLoad(`MCP tools/list (all, ${count} tools)`, listRun),
          `tool call p99 / REST p99: ${(toolRun.latencyP99 / Math.max(restRun.latencyP99, 1)).toFixed(2)} (aim <= 1.5)`,
          `tools/list p99: ${listRun.latencyP99} ms (aim < 20 ms)`,
        ],
      };
    } finally {
      await postlane.stop();
    }
  },
};
