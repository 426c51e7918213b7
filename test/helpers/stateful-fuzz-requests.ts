// The requests of the stateful fuzzer, each a function of (seed, index) and of the world's
// pools: an operation of /openapi.json with real ids, as a valid, mutated or hostile request,
// sometimes in another content type, signed with one of six kinds of credentials; or one of the
// public pages (hosted subscribe/confirm/leave, campaign unsubscribe, public form load, submit
// and embed script, tracking pixel and click links, dashboard sign-in routes), with the tokens
// found in answers and in the mail the server sent, from a rotating loopback address so the
// per-IP limits do not answer everything with 429.
import fc from 'fast-check';
import { CONTROL, encode, hostileBody, hostileQuery, hostileText, hostileValue, pathParameter, PROTO_KEYS } from './fuzz.ts';
import { recipes, type World } from './stateful-fuzz-world.ts';

export interface StatefulRequest {
  index: number;
  /** valid | mutated | hostile | content-type | public | auth */
  mode: string;
  /** full | sending | admin | member | no-csrf | extra-key | none | garbage | public */
  auth: string;
  /** The OpenAPI path (e.g. /v2/domains/{id}) or a page's name (e.g. /subscribe/{token}). */
  operation: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** The loopback address the request leaves from (127.x.y.z), for per-IP limits. */
  localAddress?: string;
  /** Statuses this request may answer with. */
  documented: Set<number>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
}
interface OpenApiOperation {
  parameters?: Array<{ in: string; name: string; schema?: Schema; required?: boolean }>;
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, unknown>;
}
type Schema = Record<string, any>;

export interface Operation {
  method: string;
  path: string;
  spec: OpenApiOperation;
  documented: Set<number>;
}

/** A small, fast PRNG (mulberry32): the same (seed, index) gives the same request shape. */
export function random(seed: number, index: number): () => number {
  let a = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35)) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)];
const chance = (rng: Rng, p: number) => rng() < p;
function weighted<T extends string>(rng: Rng, weights: Record<T, number>): T {
  const total = Object.values<number>(weights).reduce((a, b) => a + b, 0);
  let r = rng() * total;
  for (const [key, weight] of Object.entries<number>(weights)) if ((r -= weight) < 0) return key as T;
  return Object.keys(weights)[0] as T;
}

/** Samples of fuzz.ts's hostile values, drawn once from the seed and then picked by index. */
export class HostileSamples {
  readonly bodies: string[];
  readonly texts: string[];
  readonly values: unknown[];
  readonly queries: string[];
  readonly params: string[];
  constructor(seed: number) {
    this.bodies = fc.sample(hostileBody, { numRuns: 200, seed });
    this.texts = fc.sample(hostileText, { numRuns: 400, seed: seed + 1 });
    this.values = fc.sample(hostileValue, { numRuns: 400, seed: seed + 2 });
    this.queries = fc.sample(hostileQuery, { numRuns: 300, seed: seed + 3 });
    this.params = fc.sample(pathParameter, { numRuns: 300, seed: seed + 4 });
  }
}

export function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, spec]) => ({
      method: method.toUpperCase(),
      path,
      spec,
      documented: new Set(Object.keys(spec.responses).map(Number)),
    })),
  );
}

/** The pool a path parameter's ids come from: the literal segment before it. */
export function kindOfParameter(path: string, name: string): string {
  const segments = path.split('/');
  const at = segments.indexOf(`{${name}}`);
  const before = segments[at - 1] ?? '';
  if (name === 'token') return `${before === 'subscribe' ? 'audiences' : before}:token`;
  if (name === 'step_key') return 'steps';
  if (before === 'email') return 'emails';
  if (before === 'forensic') return 'reports';
  return before;
}

/** The kind of the ids a 2xx answer of `operation` lists or returns at its top level, if any. */
export function collectionOf(operation: string, kinds: Set<string>): string | null {
  const last = operation.slice(operation.lastIndexOf('/') + 1);
  if (last.startsWith('{')) return kindOfParameter(operation, last.slice(1, -1));
  return kinds.has(last) ? last : null;
}

const EXAMPLES: Record<string, (rng: Rng, world: World) => unknown> = {
  email: (rng) => `person${Math.floor(rng() * 1e6)}@example.org`,
  to: (rng) => `reader${Math.floor(rng() * 1e6)}@example.org`,
  cc: (rng) => `cc${Math.floor(rng() * 1e6)}@example.org`,
  bcc: (rng) => `bcc${Math.floor(rng() * 1e6)}@example.org`,
  from: (_rng, world) => `Fuzz <hello@${world.sendingDomain}>`,
  from_email: (_rng, world) => `news@${world.sendingDomain}`,
  reply_to: () => 'replies@example.org',
  url: (rng) => `http://127.0.0.1:9/hook/${Math.floor(rng() * 1e6)}`,
  redirect_url: () => 'https://example.org/thanks',
  html: () => '<p>Hello {{first_name|"there"}} <a href="https://example.org/x">x</a></p>',
  text: () => 'Hello {{first_name}}',
  subject: (rng) => `Subject ${Math.floor(rng() * 1e6)}`,
  password: () => 'Fuzz-password-long-enough',
  scheduled_at: (rng) => (chance(rng, 0.5) ? new Date(Date.now() + 3_600_000).toISOString() : 'tomorrow at 9am'),
  keep_until: () => new Date(Date.now() + 86_400_000).toISOString(),
  role: (rng) => pick(rng, ['admin', 'member']),
  key: (rng) => `k_${Math.floor(rng() * 1e6)}`,
  alias: (rng) => `alias-${Math.floor(rng() * 1e6)}`,
  name: (rng) => `Fuzz ${Math.floor(rng() * 1e6)}`,
  content: (_rng, world) =>
    (
      recipes(world, 0)
        .find((r) => r.kind === 'reports')!
        .body() as { content: string }
    ).content,
};

const ID_FIELDS: Record<string, string> = {
  audience_id: 'audiences',
  template_id: 'templates',
  contact_id: 'contacts',
  domain_id: 'domains',
  sending_domain_id: 'domains',
  campaign_id: 'campaigns',
  form_id: 'forms',
  webhook_id: 'webhooks',
  workspace_id: 'workspaces',
  email_id: 'emails',
  automation_id: 'automations',
};

function idOf(rng: Rng, world: World, kind: string): string {
  const live = world.live.get(kind) ?? [];
  const deleted = world.deleted.get(kind) ?? [];
  const r = rng();
  if (live.length && (r < 0.82 || !deleted.length)) return pick(rng, live);
  if (deleted.length && r < 0.94) return pick(rng, deleted);
  // Another kind's real id, or one that never existed.
  const others = [...world.live.values()].flat();
  if (others.length && chance(rng, 0.6)) return pick(rng, others);
  return `${kind.slice(0, 3)}_${'0A'.repeat(13)}z`;
}

/** A value `schema` accepts (as far as a schema can say), with field-name hints for the semantics. */
export function valueFor(schema: Schema | undefined, rng: Rng, world: World, document: OpenApiDocument, name = '', depth = 0): unknown {
  if (!schema) return null;
  if (schema.$ref) return valueFor(resolve(document, schema.$ref), rng, world, document, name, depth);
  if (ID_FIELDS[name]) return idOf(rng, world, ID_FIELDS[name]);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) {
    const nonNull = variants.filter((v: Schema) => v.type !== 'null');
    return valueFor(chance(rng, 0.9) && nonNull.length ? pick(rng, nonNull) : pick(rng, variants), rng, world, document, name, depth);
  }
  if ('const' in schema) return schema.const;
  if (schema.enum) return pick(rng, schema.enum);
  const type = Array.isArray(schema.type) ? pick(rng, schema.type) : schema.type;
  if (type === 'object' || (!type && schema.properties)) {
    if (depth > 4) return {};
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries<Schema>(schema.properties ?? {})) {
      if ((schema.required ?? []).includes(key) || chance(rng, 0.5)) out[key] = valueFor(inner, rng, world, document, key, depth + 1);
    }
    return out;
  }
  if (type === 'array') {
    const count = Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 1 + Math.floor(rng() * 3)));
    return Array.from({ length: count }, () => valueFor(schema.items, rng, world, document, name.replace(/s$/, ''), depth + 1));
  }
  if (type === 'integer' || type === 'number') {
    const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
    const max = Math.min(schema.maximum ?? min + 10, min + 1000);
    const value = min + rng() * (max - min);
    return type === 'integer' ? Math.floor(value) : value;
  }
  if (type === 'boolean') return chance(rng, 0.5);
  if (EXAMPLES[name]) return EXAMPLES[name](rng, world);
  if (schema.format === 'email') return EXAMPLES.email(rng, world);
  if (schema.format === 'date-time') return new Date(Date.now() + 3_600_000).toISOString();
  if (schema.format === 'uri') return 'https://example.org/x';
  if (name === 'events' || name === 'event') return pick(rng, ['email.delivered', 'email.bounced', 'email.opened', 'contact.created']);
  const text = `fuzz ${Math.floor(rng() * 1e6)}`;
  return schema.maxLength !== undefined ? text.slice(0, Math.max(schema.maxLength, schema.minLength ?? 1)) : text;
}

function resolve(document: OpenApiDocument, ref: string): Schema | undefined {
  let at: any = document;
  for (const part of ref.replace(/^#\//, '').split('/')) at = at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return at;
}

/** What a JSON field can be turned into: the wrong type, a boundary, a huge or strange text. */
function mutant(rng: Rng, samples: HostileSamples, schema: Schema | undefined): unknown {
  const kind = weighted(rng, { wrongType: 3, boundary: 3, huge: 1, unicode: 2, hostile: 2, nested: 1 });
  if (kind === 'wrongType') return pick(rng, [42, -1, 1.5, true, false, null, [], {}, ['a'], { a: 1 }, '', '42', 'true']);
  if (kind === 'boundary') {
    const max = schema?.maxLength ?? 255;
    return pick(rng, [
      'x'.repeat(max),
      'x'.repeat(max + 1),
      '',
      ' ',
      0,
      -1,
      2 ** 31,
      2 ** 53 + 1,
      -(2 ** 63),
      1e308,
      Number.MIN_VALUE,
      '9'.repeat(40),
      '1970-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
      '0000-00-00',
    ]);
  }
  if (kind === 'huge') return pick(rng, ['a'.repeat(100_000), 'é'.repeat(70_000), Array.from({ length: 5000 }, (_, i) => `v${i}`)]);
  if (kind === 'unicode')
    return pick(rng, [
      '😀👩‍👩‍👧‍👦',
      '\u202egnp.exe',
      'e\u0301\u0301\u0301',
      '\ud800',
      '\udfff\ud800',
      '\ufeff\u200b',
      'ＡＢＣ＠ｅｘａｍｐｌｅ．ｏｒｇ',
      'Ω≈ç√∫',
      '𝕳𝖊𝖑𝖑𝖔',
      ...CONTROL,
      'user@exämple.org',
      'тест@пример.рф',
    ]);
  if (kind === 'hostile') return pick(rng, samples.values);
  return pick(rng, [
    { __proto__: null, constructor: { prototype: { polluted: true } } },
    JSON.parse('{"__proto__":{"polluted":1}}'),
    [[[[[[[[[[]]]]]]]]]],
    { $gt: '' },
    { toString: 'x' },
  ]);
}

function mutate(rng: Rng, samples: HostileSamples, body: unknown, schema: Schema | undefined, world: World): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return mutant(rng, samples, schema);
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const properties = Object.keys(schema?.properties ?? {});
  const times = 1 + Math.floor(rng() * 3);
  for (let i = 0; i < times; i++) {
    const action = weighted(rng, { replace: 5, remove: 2, extra: 1, proto: 1, idSwap: 2 });
    const keys = Object.keys(out).length ? Object.keys(out) : properties;
    const key = keys.length ? pick(rng, keys) : 'name';
    if (action === 'replace') out[key] = mutant(rng, samples, schema?.properties?.[key]);
    else if (action === 'remove') delete out[key];
    else if (action === 'extra')
      out[pick(rng, ['unknown', 'id', 'workspace_id', 'object', 'created_at', 'status', 'key', 'token'])] = mutant(rng, samples, undefined);
    else if (action === 'proto') out[pick(rng, PROTO_KEYS)] = { polluted: true };
    else {
      const ids = [...world.live.values(), ...world.deleted.values()].flat();
      if (ids.length) out[key] = pick(rng, ids);
    }
  }
  return out;
}

/** Serialises a JSON object as something other than a JSON body. */
function otherContentType(rng: Rng, body: unknown): { headers: Record<string, string>; body: Buffer } {
  const json = JSON.stringify(body ?? {}) ?? '{}';
  const fields =
    body && typeof body === 'object' && !Array.isArray(body) ? Object.entries(body as Record<string, unknown>) : [['value', body]];
  const flat = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
  const boundary = `----fuzz${Math.floor(rng() * 1e9)}`;
  const parts = fields.map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${flat(v)}\r\n`).join('');
  const form = (end: string, type = `multipart/form-data; boundary=${boundary}`) => ({
    headers: { 'content-type': type },
    body: Buffer.from(parts + end),
  });
  const variant = weighted(rng, {
    multipart: 3,
    multipartFile: 2,
    multipartUnclosed: 1,
    multipartNoBoundary: 1,
    urlencoded: 3,
    text: 2,
    none: 1,
    charset: 1,
    xml: 1,
    badUtf8: 1,
    gzip: 1,
    emptyJson: 1,
  });
  switch (variant) {
    case 'multipart':
      return form(`--${boundary}--\r\n`);
    case 'multipartFile':
      return {
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: Buffer.from(
          `${parts}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.csv"\r\nContent-Type: text/csv\r\n\r\nemail,first_name\r\nmulti${Math.floor(rng() * 1e6)}@example.org,Ann\r\n--${boundary}--\r\n`,
        ),
      };
    case 'multipartUnclosed':
      return form('');
    case 'multipartNoBoundary':
      return form(`--${boundary}--\r\n`, 'multipart/form-data');
    case 'urlencoded':
      return {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(new URLSearchParams(fields.map(([k, v]) => [String(k), flat(v)])).toString()),
      };
    case 'text':
      return { headers: { 'content-type': 'text/plain' }, body: Buffer.from(json) };
    case 'none':
      return { headers: {}, body: Buffer.from(json) };
    case 'charset':
      return {
        headers: {
          'content-type': pick(rng, [
            'application/json; charset=utf-16',
            'application/json; charset=latin1',
            'application/json;;;',
            'APPLICATION/JSON',
            'application/vnd.api+json',
          ]),
        },
        body: Buffer.from(json),
      };
    case 'xml':
      return {
        headers: { 'content-type': 'application/xml' },
        body: Buffer.from(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>`),
      };
    case 'badUtf8':
      return {
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from('"}')]),
      };
    case 'gzip':
      return {
        headers: { 'content-type': 'application/json', 'content-encoding': pick(rng, ['gzip', 'br', 'deflate', 'identity, gzip']) },
        body: Buffer.from(json),
      };
    default:
      return { headers: { 'content-type': 'application/json' }, body: Buffer.alloc(0) };
  }
}

/** Credentials for an API request, by kind. */
function authHeaders(rng: Rng, world: World, kind: string): Record<string, string> {
  const { fullKey, sendingKey, admin, member } = world.credentials;
  switch (kind) {
    case 'full':
      return { authorization: `Bearer ${fullKey}` };
    case 'sending':
      return { authorization: `Bearer ${sendingKey}` };
    case 'admin':
      return { cookie: admin.cookie, 'x-csrf-token': admin.csrf };
    case 'member':
      return { cookie: member.cookie, 'x-csrf-token': member.csrf };
    case 'no-csrf':
      return { cookie: pick(rng, [admin, member]).cookie, ...(chance(rng, 0.5) ? { 'x-csrf-token': 'wrong' } : {}) };
    case 'cross-site':
      return { cookie: admin.cookie, 'x-csrf-token': admin.csrf, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };
    case 'extra-key':
      return world.extraKeys.length ? { authorization: `Bearer ${pick(rng, world.extraKeys)}` } : { authorization: `Bearer ${fullKey}` };
    case 'none':
      return {};
    default:
      return {
        authorization: pick(rng, [
          'Bearer ',
          'Bearer secret_' + 'x'.repeat(32),
          `Basic ${Buffer.from(`x:${fullKey}`).toString('base64')}`,
          `bearer ${fullKey}`,
          `Bearer ${fullKey} extra`,
          'Bearer \u00ff',
          `Bearer ${fullKey.slice(0, -1)}`,
        ]),
      };
  }
}

function loopbackAddress(rng: Rng): string {
  return `127.${1 + Math.floor(rng() * 250)}.${Math.floor(rng() * 256)}.${1 + Math.floor(rng() * 250)}`;
}

export interface Generator {
  next(index: number): StatefulRequest;
}

/** The request generator for `seed` over `document`'s operations and the world's pools. */
export function generator(seed: number, document: OpenApiDocument, world: World): Generator {
  const samples = new HostileSamples(seed);
  const operations = operationsOf(document);
  const kinds = new Set(
    operations.flatMap((op) => (op.path.match(/\{[^}]+\}/g) ?? []).map((p) => kindOfParameter(op.path, p.slice(1, -1)))),
  );
  const recipeByCollection = new Map(recipes(world, 0).map((r) => [r.kind, r]));
  const jsonSchemaOf = (op: Operation) => op.spec.requestBody?.content?.['application/json']?.schema;

  function apiRequest(rng: Rng, index: number, mode: string): StatefulRequest {
    const op = pick(rng, operations);
    let auth = weighted(rng, {
      full: 50,
      admin: 14,
      member: 8,
      sending: 9,
      'no-csrf': 4,
      'cross-site': 2,
      'extra-key': 5,
      none: 4,
      garbage: 4,
    });
    // The dashboard sign-in routes take no key: a session or nothing.
    if (op.path.startsWith('/auth/')) auth = pick(rng, ['admin', 'member', 'none', 'no-csrf']);
    const url =
      op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
        if (mode === 'hostile' && chance(rng, 0.5)) return pick(rng, samples.params);
        const kind = kindOfParameter(op.path, name);
        if (kind.endsWith(':token') || kind === 'steps') {
          const tokens = kind === 'steps' ? (world.live.get('steps') ?? []) : (world.tokens.get(kind) ?? []);
          return encode(tokens.length && chance(rng, 0.85) ? pick(rng, tokens) : pick(rng, ['x', 'tok_' + 'a'.repeat(40), '0']));
        }
        return encode(idOf(rng, world, kind));
      }) + queryFor(rng, op, mode);
    const headers: Record<string, string> = authHeaders(rng, world, auth);
    let body: Buffer | undefined;
    const schema = jsonSchemaOf(op);
    const takesBody = op.method === 'POST' || op.method === 'PATCH' || op.method === 'PUT';
    if (takesBody) {
      const collection = collectionOf(op.path, kinds);
      const recipe = op.method === 'POST' && collection && !op.path.endsWith('}') ? recipeByCollection.get(collection) : undefined;
      let value: unknown = recipe && chance(rng, 0.7) ? recipe.body() : schema ? valueFor(schema, rng, world, document) : undefined;
      if (op.path === '/v2/contacts/import') value = { file: `email,first_name\nimport${index}@example.org,Imp\n` };
      if (mode === 'mutated') value = mutate(rng, samples, value, schema, world);
      if (mode === 'hostile') {
        headers['content-type'] = 'application/json';
        body = Buffer.from(pick(rng, samples.bodies));
      } else if (mode === 'content-type' || op.path === '/v2/contacts/import') {
        const other = op.path === '/v2/contacts/import' && mode !== 'content-type' ? importBody(rng, index) : otherContentType(rng, value);
        Object.assign(headers, other.headers);
        body = other.body;
      } else if (value !== undefined) {
        headers['content-type'] = 'application/json';
        body = Buffer.from(JSON.stringify(value) ?? 'null');
      }
    } else if (mode === 'content-type' && chance(rng, 0.5)) {
      // A body on a GET or DELETE.
      headers['content-type'] = 'application/json';
      body = Buffer.from('{"a":1}');
    }
    return { index, mode, auth, operation: op.path, method: op.method, url, headers, body, documented: op.documented };
  }

  function queryFor(rng: Rng, op: Operation, mode: string): string {
    const parameters = (op.spec.parameters ?? []).filter((p) => p.in === 'query');
    if (mode === 'hostile' || (mode === 'mutated' && chance(rng, 0.4))) return pick(rng, samples.queries);
    if (!parameters.length || chance(rng, 0.5)) return '';
    const pairs = parameters
      .filter(() => chance(rng, 0.4))
      .map((p) => {
        let value =
          p.name === 'page'
            ? 1 + Math.floor(rng() * 3)
            : p.name === 'limit' || p.name === 'per_page'
              ? 1 + Math.floor(rng() * 100)
              : valueFor(p.schema, rng, world, document, p.name);
        if (mode === 'mutated' && chance(rng, 0.5)) value = mutant(rng, samples, p.schema);
        return `${encode(p.name)}=${encode(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))}`;
      });
    return pairs.length ? `?${pairs.join('&')}` : '';
  }

  function importBody(rng: Rng, index: number): { headers: Record<string, string>; body: Buffer } {
    const rows = `email,first_name,last_name\nimport${index}@example.org,Imp,Ort\n${pick(rng, ['bad-address,x,y', '=HYPERLINK("http://evil.example"),x,y', 'dup@example.org,a,b\ndup@example.org,c,d', ''])}\n`;
    if (chance(rng, 0.5)) return { headers: { 'content-type': 'text/csv' }, body: Buffer.from(rows) };
    const boundary = `----fuzz${index}`;
    return {
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n${rows}\r\n--${boundary}--\r\n`,
      ),
    };
  }

  // What any page may answer: the framework's refusals (an over-long parameter, a body too large or of a type it does not take) and the per-IP limit.
  const PAGE = new Set([200, 400, 404, 413, 414, 415, 429]);
  function publicRequest(rng: Rng, index: number): StatefulRequest {
    const token = (kind: string) => {
      const list = world.tokens.get(kind) ?? [];
      if (list.length && chance(rng, 0.8)) {
        const real = pick(rng, list);
        // A real token, or one altered in a way a careless mail client or an attacker would.
        return chance(rng, 0.8)
          ? real
          : pick(rng, [
              real.slice(0, -1),
              `${real}x`,
              real.toUpperCase(),
              `${real}%00`,
              `${real}/..`,
              real.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
            ]);
      }
      return pick(rng, [...samples.params.slice(0, 50), 'x', 'a'.repeat(3000)]);
    };
    const page = weighted(rng, {
      subscribeGet: 3,
      subscribePost: 4,
      confirmGet: 2,
      confirmPost: 2,
      leaveGet: 2,
      leavePost: 2,
      unsubscribeGet: 3,
      unsubscribePost: 3,
      open: 4,
      click: 4,
      embed: 2,
      formLoad: 3,
      formSubmit: 4,
      formOptions: 1,
      v1Subscribe: 2,
      dashboard: 2,
    });
    const localAddress = loopbackAddress(rng);
    const form = () => {
      const variant = rng();
      if (variant < 0.5) {
        const email = chance(rng, 0.6) ? `visitor${Math.floor(rng() * 1e6)}@example.org` : String(pick(rng, samples.texts));
        return {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: Buffer.from(new URLSearchParams({ email, first_name: String(pick(rng, samples.texts)).slice(0, 200) }).toString()),
        };
      }
      return otherContentType(rng, { email: pick(rng, samples.values), first_name: pick(rng, samples.texts) });
    };
    const make = (
      operation: string,
      method: string,
      url: string,
      documented: number[],
      extra: { headers?: Record<string, string>; body?: Buffer } = {},
    ): StatefulRequest => ({
      index,
      mode: 'public',
      auth: 'public',
      operation,
      method,
      url,
      headers: extra.headers ?? {},
      body: extra.body,
      localAddress,
      documented: new Set([...PAGE, ...documented]),
    });
    switch (page) {
      case 'subscribeGet':
        return make('/subscribe/{token}', 'GET', `/subscribe/${token('audiences:token')}`, []);
      case 'subscribePost':
        return make('/subscribe/{token}', 'POST', `/subscribe/${token('audiences:token')}`, [422, 503], form());
      case 'confirmGet':
        return make('/subscribe/confirm/{token}', 'GET', `/subscribe/confirm/${token('confirm')}`, []);
      case 'confirmPost':
        return make(
          '/subscribe/confirm/{token}',
          'POST',
          `/subscribe/confirm/${token('confirm')}`,
          [303, 422],
          chance(rng, 0.5) ? form() : {},
        );
      case 'leaveGet':
        return make('/subscribe/leave/{token}', 'GET', `/subscribe/leave/${token('leave')}`, []);
      case 'leavePost':
        return make('/subscribe/leave/{token}', 'POST', `/subscribe/leave/${token('leave')}`, [], chance(rng, 0.5) ? form() : {});
      case 'unsubscribeGet':
        return make('/unsubscribe/{token}', 'GET', `/unsubscribe/${token('unsubscribe')}`, []);
      case 'unsubscribePost':
        return make(
          '/unsubscribe/{token}',
          'POST',
          `/unsubscribe/${token('unsubscribe')}`,
          [],
          chance(rng, 0.6)
            ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from('List-Unsubscribe=One-Click') }
            : form(),
        );
      case 'open':
        return make('/o/{file}', pick(rng, ['GET', 'GET', 'HEAD']), `/o/${token('open')}`, []);
      case 'click':
        return make('/c/{token}', pick(rng, ['GET', 'GET', 'HEAD']), `/c/${token('click')}`, [302]);
      case 'embed': {
        const headers: Record<string, string> = chance(rng, 0.5) ? { 'accept-encoding': 'gzip' } : {};
        if (chance(rng, 0.3))
          headers['if-none-match'] = pick(rng, ['"x"', '*', String(pick(rng, samples.texts)).replace(/[^\x20-\x7e]/g, '')]);
        return make('/js/{key}/postlane.js', 'GET', `/js/${token('embed')}/postlane.js`, [304, 503], { headers });
      }
      case 'formLoad':
        return make('/v2/forms/{id}', 'GET', `/v2/forms/${token('forms:token')}`, [
          ...(document.paths['/v2/forms/{id}']?.get ? Object.keys(document.paths['/v2/forms/{id}'].get.responses).map(Number) : []),
        ]);
      case 'formSubmit': {
        const submit = document.paths['/v2/forms/{token}/submit']?.post;
        const value = chance(rng, 0.5)
          ? {
              fields: { email: `visitor${index}@example.org` },
              proof: chance(rng, 0.5) ? { challenge: { parameters: {} }, solution: { counter: 1, derivedKey: 'x' } } : undefined,
            }
          : mutate(rng, samples, { fields: { email: 'a@example.org' } }, submit?.requestBody?.content?.['application/json']?.schema, world);
        const body = chance(rng, 0.8)
          ? { headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(value)) }
          : otherContentType(rng, value);
        return make(
          '/v2/forms/{token}/submit',
          'POST',
          `/v2/forms/${token('forms:token')}/submit`,
          submit ? Object.keys(submit.responses).map(Number) : [],
          body,
        );
      }
      case 'formOptions':
        return make('/v2/forms/{token}/submit', 'OPTIONS', `/v2/forms/${token('forms:token')}/submit`, [204]);
      case 'v1Subscribe': {
        const op = document.paths['/v1/audiences/subscribe/{token}']?.post;
        const value = chance(rng, 0.6)
          ? { email: `v1-${index}@example.org`, first_name: 'V' }
          : mutate(rng, samples, { email: 'x@example.org' }, undefined, world);
        const body = chance(rng, 0.8)
          ? { headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(value)) }
          : otherContentType(rng, value);
        return make(
          '/v1/audiences/subscribe/{token}',
          'POST',
          `/v1/audiences/subscribe/${token('audiences:token')}`,
          op ? Object.keys(op.responses).map(Number) : [],
          body,
        );
      }
      default:
        return make(
          '/dashboard/*',
          'GET',
          pick(rng, [
            '/',
            '/dashboard',
            '/dashboard/',
            '/dashboard/contacts',
            '/dashboard/../../etc/passwd',
            '/dashboard/%2e%2e/%2e%2e/package.json',
            '/dashboard/assets/none.js',
            `/dashboard/${encode(String(pick(rng, samples.texts)))}`,
          ]),
          [301, 302, 304],
        );
    }
  }

  function authRequest(rng: Rng, index: number): StatefulRequest {
    const localAddress = loopbackAddress(rng);
    const { admin, member } = world.credentials;
    const op = (path: string, method: string) => document.paths[path]?.[method.toLowerCase()];
    const documented = (path: string, method: string) => new Set(Object.keys(op(path, method)?.responses ?? {}).map(Number));
    const json = (value: unknown) => ({ 'content-type': 'application/json' });
    const choice = weighted(rng, {
      signInWrong: 3,
      signInRight: 1,
      signInHostile: 2,
      session: 2,
      switchWorkspace: 2,
      invitationGet: 2,
      invitationAccept: 2,
    });
    const base = { index, mode: 'auth', localAddress };
    const who = chance(rng, 0.5) ? admin : member;
    switch (choice) {
      case 'signInWrong':
      case 'signInRight': {
        // Not the users whose sessions the fuzzer keeps: a lockout of theirs would end nothing, but
        // the bystanders' accounts are what a lockout protects.
        const email = chance(rng, 0.5) ? 'nobody@example.org' : `colleague${Math.floor(rng() * 2)}@example.org`;
        const password = choice === 'signInRight' ? 'Fuzz-password-long-enough' : String(pick(rng, samples.texts));
        return {
          ...base,
          auth: 'none',
          operation: '/auth/sign-in',
          method: 'POST',
          url: '/auth/sign-in',
          headers: json(null),
          body: Buffer.from(JSON.stringify({ email, password })),
          documented: documented('/auth/sign-in', 'post'),
        };
      }
      case 'signInHostile': {
        const value = mutate(
          rng,
          samples,
          { email: 'a@example.org', password: 'x' },
          op('/auth/sign-in', 'post')?.requestBody?.content?.['application/json']?.schema,
          world,
        );
        const other = chance(rng, 0.6) ? { headers: json(null), body: Buffer.from(JSON.stringify(value)) } : otherContentType(rng, value);
        return {
          ...base,
          auth: 'none',
          operation: '/auth/sign-in',
          method: 'POST',
          url: '/auth/sign-in',
          headers: other.headers,
          body: other.body,
          documented: documented('/auth/sign-in', 'post'),
        };
      }
      case 'session':
        return {
          ...base,
          auth: 'admin',
          operation: '/auth/session',
          method: 'GET',
          url: '/auth/session',
          headers: {
            cookie: chance(rng, 0.6)
              ? who.cookie
              : pick(rng, [
                  'postlane_session=x',
                  'postlane_session=',
                  `${who.cookie}; ${who.cookie}x`,
                  'a=b; c',
                  String(pick(rng, samples.texts)).replace(/[^\x20-\x7e]/g, ''),
                ]),
          },
          documented: documented('/auth/session', 'get'),
        };
      case 'switchWorkspace': {
        const value = chance(rng, 0.5)
          ? { workspace_id: idOf(rng, world, 'workspaces') }
          : mutate(rng, samples, { workspace_id: 'wsp_x' }, undefined, world);
        return {
          ...base,
          auth: 'admin',
          operation: '/auth/workspace',
          method: 'POST',
          url: '/auth/workspace',
          headers: { cookie: who.cookie, 'x-csrf-token': who.csrf, ...json(null) },
          body: Buffer.from(JSON.stringify(value)),
          documented: documented('/auth/workspace', 'post'),
        };
      }
      case 'invitationGet': {
        const tokens = world.tokens.get('invitations:token') ?? [];
        const token = tokens.length && chance(rng, 0.8) ? pick(rng, tokens) : pick(rng, samples.params);
        return {
          ...base,
          auth: 'none',
          operation: '/auth/invitations/{token}',
          method: 'GET',
          url: `/auth/invitations/${token}`,
          headers: {},
          documented: documented('/auth/invitations/{token}', 'get'),
        };
      }
      default: {
        const tokens = world.tokens.get('invitations:token') ?? [];
        const token = tokens.length && chance(rng, 0.8) ? pick(rng, tokens) : pick(rng, samples.params);
        const value = chance(rng, 0.5)
          ? { password: 'Fuzz-password-long-enough' }
          : mutate(rng, samples, { password: 'Fuzz-password-long-enough' }, undefined, world);
        return {
          ...base,
          auth: 'none',
          operation: '/auth/invitations/{token}/accept',
          method: 'POST',
          url: `/auth/invitations/${token}/accept`,
          headers: json(null),
          body: Buffer.from(JSON.stringify(value)),
          documented: documented('/auth/invitations/{token}/accept', 'post'),
        };
      }
    }
  }

  return {
    next(index) {
      const rng = random(seed, index);
      const mode = weighted(rng, { valid: 31, mutated: 25, hostile: 12, 'content-type': 9, public: 21, auth: 2 });
      if (mode === 'public') return publicRequest(rng, index);
      if (mode === 'auth') return authRequest(rng, index);
      return apiRequest(rng, index, mode);
    },
  };
}
