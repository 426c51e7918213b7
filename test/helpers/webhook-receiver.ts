// A webhook endpoint on loopback for tests: a real HTTP server that records every request
// (raw body kept byte for byte, for signature checks) and answers with programmable status
// codes, headers, bodies and delays.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body as received. */
  body: string;
  /** The parsed body (undefined when not JSON). */
  json: any;
  receivedAt: number;
}

export interface ReceiverResponse {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:PORT` (add a path as you like). */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** The answer given when no queued answer is left (default 200 `ok`). */
  setDefault(response: ReceiverResponse): void;
  /** One-shot answers, used in order before the default. */
  queue(...responses: ReceiverResponse[]): void;
  /** Every batch item received so far, in arrival order. */
  items(): any[];
  /** The requests whose path starts with `path`. */
  on(path: string): ReceivedRequest[];
  /** The largest number of requests that were open at the same time. */
  maxConcurrent(): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  let queued: ReceiverResponse[] = [];
  let fallback: ReceiverResponse = { status: 200, body: 'ok' };
  let open = 0;
  let peak = 0;

  const server: Server = createServer((request, response) => {
    open++;
    peak = Math.max(peak, open);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body,
        json,
        receivedAt: Date.now(),
      });
      const answer = queued.shift() ?? fallback;
      const send = () => {
        open--;
        if (response.destroyed) return;
        response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        response.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    setDefault: (response) => void (fallback = response),
    queue: (...responses) => void queued.push(...responses),
    items: () => requests.flatMap((r) => (Array.isArray(r.json) ? r.json : [])),
    on: (path) => requests.filter((r) => r.path.startsWith(path)),
    maxConcurrent: () => peak,
    reset() {
      requests.length = 0;
      queued = [];
      fallback = { status: 200, body: 'ok' };
      peak = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
