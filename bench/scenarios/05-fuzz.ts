// 100,000 hostile requests over every operation of /openapi.json (issue 20): how many answered
// 5xx (aim: 0), how many answered a status their operation does not document, how many leaked a
// stack trace or SQL (aim: 0), how many got no answer and why, and whether the server stayed up.
//
// Requests go through node:http rather than fetch: it sends the path as generated (fetch's URL
// parser would turn the path tricks, such as %2e%2e, into plain dot segments before sending),
// and each worker keeps one connection of its own, so a request that gets no answer can be
// reported with the one before it on the same connection (the usual culprit: a body the server
// left unread, which once hung the next request until Node's timeout reset the connection).
import http from 'node:http';
import type { Scenario } from '../run.ts';
import { startPostlane } from '../lib.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { hostileRequests, LEAK, operationsOf, type FuzzRequest } from '../../test/helpers/fuzz.ts';

const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 100_000);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 16);
/** Requests per operation generated at a time: memory stays small (the bodies average ~50 kB). */
const PER_SLICE = 4;
/** A request unanswered this long counts as no answer (the server's own timeouts are longer). */
const ANSWER_TIMEOUT_MS = Number(process.env.FUZZ_ANSWER_TIMEOUT_MS ?? 30_000);

type Outcome =
  | { kind: 'answer'; status: number; text: string }
  /** The client refused to send it (e.g. a character Node will not put in a request line): not the server's doing. */
  | { kind: 'not sent'; cause: string }
  /** Sent, and the connection failed or stayed silent before a whole answer came. */
  | { kind: 'no answer'; cause: string };

function send(port: number, agent: http.Agent, headers: Record<string, string>, request: FuzzRequest): Promise<Outcome> {
  return new Promise((resolve) => {
    let outgoing: http.ClientRequest;
    try {
      const length = request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.body)) };
      outgoing = http.request({ host: '127.0.0.1', port, method: request.method, path: request.url, agent, headers: { ...headers, ...length } });
    } catch (error) {
      return resolve({ kind: 'not sent', cause: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
    }
    outgoing.setTimeout(ANSWER_TIMEOUT_MS, () => outgoing.destroy(Object.assign(new Error('timeout'), { code: `no answer in ${ANSWER_TIMEOUT_MS / 1000} s` })));
    outgoing.on('error', (error: NodeJS.ErrnoException) => resolve({ kind: 'no answer', cause: error.code ?? error.message }));
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error: NodeJS.ErrnoException) => resolve({ kind: 'no answer', cause: `body cut: ${error.code ?? error.message}` }));
      response.on('end', () => resolve({ kind: 'answer', status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.end(request.body);
  });
}

const describe = (request: FuzzRequest) => `${request.method} ${request.url.slice(0, 120)}${request.body === undefined ? '' : ` (body ${request.body.length.toLocaleString('en')} chars)`}`;

export const scenario: Scenario = {
  name: 'fuzz',
  description: `${TOTAL.toLocaleString('en')} hostile requests over every operation of /openapi.json (aim: 0 answers of 5xx, nothing leaked, every request answered)`,
  async run() {
    // Lookups the hostile requests cause (domains, webhook URLs, verifications) go to a loopback
    // DNS server that knows no name: answered at once, never the machine's resolver's timeouts.
    const dns = await startDnsServer();
    const postlane = await startPostlane({ DNS_SERVERS: dns.address });
    try {
      const port = Number(new URL(postlane.url).port);
      const headers = { authorization: `Bearer ${postlane.key}`, 'content-type': 'application/json' };
      const document = (await (await fetch(`${postlane.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> };
      const operations = operationsOf(document);
      const documented = (request: FuzzRequest, status: number) => Object.hasOwn(document.paths[request.operation]?.[request.method.toLowerCase()]?.responses ?? {}, String(status));

      // Generated a slice at a time as the workers need them, reproducible from the slice's seed.
      let queue: FuzzRequest[] = [];
      let generated = 0;
      let seed = 0;
      const take = (): FuzzRequest | undefined => {
        if (!queue.length && generated < TOTAL) {
          queue = hostileRequests(operations, PER_SLICE, ++seed * 7919).slice(0, TOTAL - generated);
          generated += queue.length;
        }
        return queue.pop();
      };

      const statuses = new Map<number, number>();
      const noAnswer = new Map<string, number>();
      const notSent = new Map<string, number>();
      const examples: string[] = [];
      let sent = 0;
      let leaks = 0;
      let undocumented = 0;
      const count = (map: Map<string | number, number>, key: string | number) => map.set(key, (map.get(key) ?? 0) + 1);
      const example = (line: string) => examples.length < 12 && examples.push(line);
      const started = performance.now();
      const worker = async () => {
        // One connection per worker, so "the request before it" is the one on the same connection.
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        let previous: FuzzRequest | undefined;
        for (let request = take(); request; request = take()) {
          const outcome = await send(port, agent, headers, request);
          if (outcome.kind === 'not sent') {
            count(notSent, outcome.cause);
            example(`not sent (${outcome.cause}): ${describe(request)}`);
          } else {
            if (++sent % 10_000 === 0) process.stderr.write(`  … ${sent.toLocaleString('en')} sent in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
            if (outcome.kind === 'no answer') {
              count(noAnswer, outcome.cause);
              example(`no answer (${outcome.cause}): ${describe(request)}; before it on that connection: ${previous ? describe(previous) : 'nothing'}`);
            } else {
              count(statuses, outcome.status);
              if (outcome.status >= 500) example(`${outcome.status}: ${describe(request)} → ${outcome.text.slice(0, 200)}`);
              else if (!documented(request, outcome.status)) {
                undocumented++;
                example(`undocumented ${outcome.status}: ${describe(request)} → ${outcome.text.slice(0, 200)}`);
              }
              if (outcome.status >= 400 && LEAK.test(outcome.text)) {
                leaks++;
                example(`leak: ${describe(request)} → ${outcome.text.slice(0, 200)}`);
              }
            }
          }
          previous = request;
        }
        agent.destroy();
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const seconds = (performance.now() - started) / 1000;

      const fiveHundreds = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
      const unanswered = [...noAnswer.values()].reduce((n, c) => n + c, 0);
      const up = (await fetch(`${postlane.url}/healthz`).catch(() => null))?.status === 200;
      const unhandled = postlane.output().split('\n').filter((line) => line.includes('unhandled error')).length;
      const list = (map: Map<string | number, number>) => [...map].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, c]) => `${k}: ${c}`).join(', ') || 'none';
      return {
        name: this.name,
        lines: [
          `requests: ${sent} sent over ${operations.length} operations in ${seconds.toFixed(1)} s (${Math.round(sent / seconds)} req/s, ${CONCURRENCY} connections)`,
          `answers by status: ${list(statuses)}`,
          `5xx: ${fiveHundreds} (aim 0); answers with a status the operation does not document: ${undocumented} (aim 0); bodies leaking a stack trace or SQL: ${leaks} (aim 0)`,
          `no answer (sent, connection failed or silent for ${ANSWER_TIMEOUT_MS / 1000} s): ${unanswered} (aim 0)${unanswered ? ` by cause: ${list(noAnswer)}` : ''}`,
          `not sent (refused by the client itself, not the server's doing): ${list(notSent)}`,
          `server up afterwards: ${up ? 'yes' : 'NO'}; "unhandled error" lines in its log: ${unhandled}`,
          ...examples.map((line) => `  ${line}`),
        ],
      };
    } finally {
      await postlane.stop();
      await dns.close();
    }
  },
};
