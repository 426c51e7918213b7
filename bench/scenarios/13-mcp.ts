// The MCP server beside the REST API in the same run: a read tool (get-api-key) against the
// same REST call (GET /v2/api-keys/{id}), and tools/list with every toolset.
// Aims: the tool call's p99 at most 1.5 times REST's; tools/list p99 under 20 ms. Both are
// judged at a steady rate (MCP_RATE, 100 requests a second, paced evenly: an assistant makes a
// few calls a second), where latency is the time an answer takes. At full speed (autocannon,
// closed loop) latency is mostly time spent queueing behind other requests on a busy CPU, so
// those runs are printed for throughput: a tool call is a REST call made inside the server
// (Fastify's inject) behind the JSON-RPC request, and costs about twice its CPU.
import type { Scenario } from '../run.ts';
import { describeLoad, load, pacedLoad, startPostlane } from '../lib.ts';

const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const RATE = Number(process.env.MCP_RATE ?? 100);

export const scenario: Scenario = {
  name: 'mcp',
  description: `MCP tool call vs the same REST call, and tools/list with every toolset, at ${RATE} req/s and at full speed (aims at the steady rate: p99 ratio <= 1.5, tools/list p99 < 20 ms)`,
  async run({ seconds, connections }) {
    const postlane = await startPostlane();
    try {
      const headers = { authorization: `Bearer ${postlane.key}` };
      const list = await (await fetch(`${postlane.url}/v2/api-keys`, { headers })).json();
      const id = list.data[0].id;
      const rest = `${postlane.url}/v2/api-keys/${id}`;
      const mcp = `${postlane.url}/mcp`;
      const mcpHeaders = { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const call = { method: 'POST', headers: mcpHeaders, body: rpc('tools/call', { name: 'get-api-key', arguments: { id } }) };
      // As MCP clients on fetch ask (undici sends accept-encoding: gzip, deflate): the ~400 KB list compresses well.
      const tools = { method: 'POST', headers: { ...mcpHeaders, 'accept-encoding': 'gzip' }, body: rpc('tools/list', {}) };
      const check = await (await fetch(mcp, call)).json();
      if (check.result?.isError || !check.result?.structuredContent) throw new Error(`tool call failed: ${JSON.stringify(check)}`);
      const count = (await (await fetch(`${mcp}?toolsets=all`, { ...tools, headers: mcpHeaders })).json()).result.tools.length;

      // Warm up (JIT, the catalog, caches) before measuring.
      await load(rest, { seconds: 2, connections, headers });
      await load(mcp, { seconds: 2, connections, ...call });
      await load(`${mcp}?toolsets=all`, { seconds: 2, connections, ...tools });
      // Alternating, so that a busy moment of the machine falls on both.
      const paced = { seconds, rate: RATE, connections };
      const restPaced = await pacedLoad(rest, { ...paced, headers });
      const toolPaced = await pacedLoad(mcp, { ...paced, ...call });
      const listPaced = await pacedLoad(`${mcp}?toolsets=all`, { ...paced, ...tools });
      const restRun = await load(rest, { seconds, connections, headers });
      const toolRun = await load(mcp, { seconds, connections, ...call });
      const listRun = await load(`${mcp}?toolsets=all`, { seconds, connections, ...tools });
      return {
        name: this.name,
        lines: [
          `at ${RATE} req/s, paced evenly:`,
          describeLoad('  REST GET /v2/api-keys/{id}', restPaced),
          describeLoad('  MCP tools/call get-api-key', toolPaced),
          describeLoad(`  MCP tools/list (all, ${count} tools)`, listPaced),
          `  tool call p99 / REST p99: ${(toolPaced.latencyP99 / Math.max(restPaced.latencyP99, 0.1)).toFixed(2)} (aim <= 1.5)`,
          `  tools/list p99: ${listPaced.latencyP99} ms (aim < 20 ms)`,
          `at full speed, ${connections} connections (throughput; latency here is mostly queueing):`,
          describeLoad('  REST GET /v2/api-keys/{id}', restRun),
          describeLoad('  MCP tools/call get-api-key', toolRun),
          describeLoad(`  MCP tools/list (all, ${count} tools)`, listRun),
          `  tool calls per second / REST calls per second: ${(toolRun.requestsPerSecond / Math.max(restRun.requestsPerSecond, 1)).toFixed(2)}`,
        ],
      };
    } finally {
      await postlane.stop();
    }
  },
};
