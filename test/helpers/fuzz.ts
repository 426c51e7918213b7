// Hostile requests for every operation of /openapi.json, generated with fast-check: malformed
// JSON, wrong types, huge and deeply nested values, NUL and control characters, prototype-
// pollution keys, path tricks in ids, huge paging values, filter keys with SQL metacharacters.
// Used by the fuzz test (a bounded count) and the `fuzz` bench scenario (100,000 requests).
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
    Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path, hasBody: method === 'post' || method === 'patch' || method === 'put' })),
  );
}

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
const SQLISH = ["'", '"', ';', '--', "' OR 1=1 --", '%', '_', '\\', '`', '/*', '*/', "'); DROP TABLE emails; --", 'NULL', '$1', '?'];
const CONTROL = ['\u0000', '\u0001', '\u001f', '\u007f', '\ud800', '\u202e', '\r\n', '\t'];

const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(...PROTO_KEYS, ...SQLISH, ...CONTROL),
  fc.constantFrom('../../etc/passwd', '..%2F..%2F', '%00', '%', '%zz', '.', '..', '//', 'em_' + 'a'.repeat(27), 'x'.repeat(5000)),
  fc.integer().map(String),
  fc.constantFrom('-1', '0', '1e309', 'NaN', 'Infinity', '99999999999999999999', '1.5', 'true', 'null', '[]', '{}'),
);

/** A JSON value that is wrong in every way a schema can be. */
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
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

const hostileBody: fc.Arbitrary<string> = fc.oneof(
  // Objects with the right shape's keys guessed and wrong values, or prototype keys.
  fc.dictionary(fc.constantFrom('to', 'from', 'subject', 'html', 'text', 'name', 'email', 'url', 'events', 'type', 'scope', 'scheduled_at', 'keep_until', 'filter', 'source', 'alias', 'tracking_key', ...PROTO_KEYS), hostileValue, { maxKeys: 6 }).map((o) => JSON.stringify(o)),
  fc.constantFrom('{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '{', '{"a":', 'nul', '\u0000', '[1,2', '"just a string"', '42', 'null', '[]', ''),
  fc.integer({ min: 1_000, max: 20_000 }).map(deeplyNested),
  // Written out rather than JSON.stringify'd: the same text, without scanning a megabyte per request.
  fc.integer({ min: 100_000, max: 600_000 }).map((n) => `{"name":"${'x'.repeat(n)}","to":"${'a'.repeat(n)}"}`),
  hostileValue.map((v) => JSON.stringify(v) ?? 'null'),
);

/** Percent-encoded; a lone surrogate becomes the bytes of one (invalid UTF-8), as a careless client might send. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.toWellFormed()) + '%ED%A0%80';
  }
}

const queryKey = fc.oneof(
  fc.constantFrom('page', 'limit', 'per_page', 'order', 'direction', 'sort', 'search', 'q', 'match', 'type', 'include_data', 'date_from', 'date_to'),
  fc.tuple(fc.constantFrom(...PROTO_KEYS, 'name', 'email', 'status', 'created_at', ...SQLISH), fc.constantFrom('exact', 'contains', 'between', 'in', 'not_in', 'is_empty', ...SQLISH)).map(([k, c]) => `${k}.${c}`),
  fc.constantFrom('filter[type]', 'filter[name]', 'filter[__proto__]', 'filter[', ']'),
);

const query = fc
  .array(fc.tuple(queryKey, fc.oneof(hostileText, fc.constantFrom('0', '-5', '101', '1000000000', '9'.repeat(40)))), { maxLength: 4 })
  .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}` : ''));

/** Path parameters: hostile text, encoded as a client would (or not quite). */
const pathParameter = fc.oneof(hostileText.map((t) => encode(t) || '%20'), fc.constantFrom('%2e%2e', '..%252f', '%25', 'a%00b'));

/** One hostile request for `operation`. */
export function requestFor(operation: FuzzOperation): fc.Arbitrary<FuzzRequest> {
  const names = operation.path.match(/\{[^}]+\}/g) ?? [];
  return fc.record({
    params: fc.array(pathParameter, { minLength: names.length, maxLength: names.length }),
    query,
    body: operation.hasBody ? fc.option(hostileBody, { nil: undefined }) : fc.constant(undefined),
  }).map(({ params, query: search, body }) => {
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
export const LEAK = /(\n\s+at |node_modules|\.ts:\d+|SQLITE_|sqlite3|syntax error at|relation "|violates|select .* from|insert into|Kysely|TypeError|ReferenceError)/i;
