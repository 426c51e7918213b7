// Hostile requests for every operation of /openapi.json, generated with fast-check: malformed
// JSON, wrong types, huge and deeply nested values, NUL and control characters, prototype-
// pollution keys, path tricks in ids, huge paging values, filter keys with SQL metacharacters.
// Used by the fuzz test (a bounded count) and the `fuzz` bench scenario (100,000 requests),
// both sending through sendAsIs (node:http, the request line as generated).
import http from 'node:http';
import fc from 'fast-check';

export interface FuzzOperation {
  method: string;
  /** OpenAPI path, e.g. /v2/domains/{id}. */
  path: string;
  hasBody: boolean;
}

export interface FuzzRequest {
  /** The operation's OpenAPI path, e.g. /v2/domains/{id}, to look up its documented answers. */
  operation: string;
  method: string;
  url: string;
  /** Sent as is with content-type application/json (often not valid JSON on purpose). */
  body?: string;
}

/** The operations of an OpenAPI document. */
export function operationsOf(document: { paths: Record<string, Record<string, unknown>> }): FuzzOperation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => ({
      method: method.toUpperCase(),
      path,
      hasBody: method === 'post' || method === 'patch' || method === 'put',
    })),
  );
}

export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
export const SQLISH = ["'", '"', ';', '--', "' OR 1=1 --", '%', '_', '\\', '`', '/*', '*/', "'); DROP TABLE emails; --", 'NULL', '$1', '?'];
export const CONTROL = ['\u0000', '\u0001', '\u001f', '\u007f', '\ud800', '\u202e', '\r\n', '\t'];

export const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(...PROTO_KEYS, ...SQLISH, ...CONTROL),
  fc.constantFrom('../../etc/passwd', '..%2F..%2F', '%00', '%', '%zz', '.', '..', '//', 'em_' + 'a'.repeat(27), 'x'.repeat(5000)),
  fc.integer().map(String),
  fc.constantFrom('-1', '0', '1e309', 'NaN', 'Infinity', '99999999999999999999', '1.5', 'true', 'null', '[]', '{}'),
);

/** A JSON value that is wrong in every way a schema can be. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileText,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...PROTO_KEYS)), tie('value'), { maxKeys: 4 }),
  ),
})).value;

function deeplyNested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

export const hostileBody: fc.Arbitrary<string> = fc.oneof(
  // Objects with the right shape's keys guessed and wrong values, or prototype keys.
  fc
    .dictionary(
      fc.constantFrom(
        'to',
        'from',
        'subject',
        'html',
        'text',
        'name',
        'email',
        'url',
        'events',
        'type',
        'scope',
        'scheduled_at',
        'keep_until',
        'filter',
        'source',
        'alias',
        'tracking_key',
        ...PROTO_KEYS,
      ),
      hostileValue,
      { maxKeys: 6 },
    )
    .map((o) => JSON.stringify(o)),
  fc.constantFrom(
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{',
    '{"a":',
    'nul',
    '\u0000',
    '[1,2',
    '"just a string"',
    '42',
    'null',
    '[]',
    '',
  ),
  fc.integer({ min: 1_000, max: 20_000 }).map(deeplyNested),
  // Written out rather than JSON.stringify'd: the same text, without scanning a megabyte per request.
  fc.integer({ min: 100_000, max: 600_000 }).map((n) => `{"name":"${'x'.repeat(n)}","to":"${'a'.repeat(n)}"}`),
  hostileValue.map((v) => JSON.stringify(v) ?? 'null'),
);

/** Percent-encoded; a lone surrogate becomes the bytes of one (invalid UTF-8), as a careless client might send. */
export function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.toWellFormed()) + '%ED%A0%80';
  }
}

const queryKey = fc.oneof(
  fc.constantFrom(
    'page',
    'limit',
    'per_page',
    'order',
    'direction',
    'sort',
    'search',
    'q',
    'match',
    'type',
    'include_data',
    'date_from',
    'date_to',
  ),
  fc
    .tuple(
      fc.constantFrom(...PROTO_KEYS, 'name', 'email', 'status', 'created_at', ...SQLISH),
      fc.constantFrom('exact', 'contains', 'between', 'in', 'not_in', 'is_empty', ...SQLISH),
    )
    .map(([k, c]) => `${k}.${c}`),
  fc.constantFrom('filter[type]', 'filter[name]', 'filter[__proto__]', 'filter[', ']'),
);

export const hostileQuery = fc
  .array(fc.tuple(queryKey, fc.oneof(hostileText, fc.constantFrom('0', '-5', '101', '1000000000', '9'.repeat(40)))), { maxLength: 4 })
  .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}` : ''));

/** Path parameters: hostile text, encoded as a client would (or not quite). */
export const pathParameter = fc.oneof(
  hostileText.map((t) => encode(t) || '%20'),
  fc.constantFrom('%2e%2e', '..%252f', '%25', 'a%00b'),
);

/** One hostile request for `operation`. */
export function requestFor(operation: FuzzOperation): fc.Arbitrary<FuzzRequest> {
  const names = operation.path.match(/\{[^}]+\}/g) ?? [];
  return fc
    .record({
      params: fc.array(pathParameter, { minLength: names.length, maxLength: names.length }),
      query: hostileQuery,
      body: operation.hasBody ? fc.option(hostileBody, { nil: undefined }) : fc.constant(undefined),
    })
    .map(({ params, query: search, body }) => {
      let i = 0;
      const url = operation.path.replace(/\{[^}]+\}/g, () => params[i++]) + search;
      return { operation: operation.path, method: operation.method, url, ...(body !== undefined ? { body } : {}) };
    });
}

/** `count` hostile requests for each operation, reproducible from `seed`. */
export function hostileRequests(operations: FuzzOperation[], count: number, seed: number): FuzzRequest[] {
  return operations.flatMap((operation, i) => fc.sample(requestFor(operation), { numRuns: count, seed: seed + i }));
}

/** What a 4xx body must never contain: a stack trace, SQL or a driver's words. */
export const LEAK =
  /(\n\s+at |node_modules|\.ts:\d+|SQLITE_|sqlite3|syntax error at|relation "|violates|select .* from|insert into|Kysely|TypeError|ReferenceError)/i;

export type FuzzOutcome =
  | { kind: 'answer'; status: number; contentType: string | null; text: string }
  /** The client refused to send it (e.g. a character Node will not put in a request line): not the server's doing. */
  | { kind: 'not sent'; cause: string }
  /** Sent, and the connection failed or stayed silent before a whole answer came. */
  | { kind: 'no answer'; cause: string };

/** Sends `request` through node:http with its request line exactly as generated: fetch's URL
 *  parser would turn path tricks such as %2e%2e or .. into plain dot segments before sending.
 *  `agent` (keep-alive, one socket) makes a worker's requests share one connection. */
export function sendAsIs(
  port: number,
  agent: http.Agent,
  headers: Record<string, string>,
  request: FuzzRequest,
  timeoutMs: number,
): Promise<FuzzOutcome> {
  return new Promise((resolve) => {
    let outgoing: http.ClientRequest;
    try {
      const length = request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.body)) };
      outgoing = http.request({
        host: '127.0.0.1',
        port,
        method: request.method,
        path: request.url,
        agent,
        headers: { ...headers, ...length },
      });
    } catch (error) {
      return resolve({ kind: 'not sent', cause: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
    }
    outgoing.setTimeout(timeoutMs, () =>
      outgoing.destroy(Object.assign(new Error('timeout'), { code: `no answer in ${timeoutMs / 1000} s` })),
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => resolve({ kind: 'no answer', cause: error.code ?? error.message }));
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error: NodeJS.ErrnoException) =>
        resolve({ kind: 'no answer', cause: `body cut: ${error.code ?? error.message}` }),
      );
      response.on('end', () =>
        resolve({
          kind: 'answer',
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'] ?? null,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    outgoing.end(request.body);
  });
}

/** A URL of `operation` with plain ids, for looking up its documented answers (the path as
 *  sent may hold dot segments that a URL parser would resolve to another path). */
export function documentedUrlOf(request: FuzzRequest): string {
  return request.operation.replace(/\{[^}]+\}/g, 'x');
}
