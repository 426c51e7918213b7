// Broken bodies of every kind sent to every route that takes one (each POST, PATCH, PUT and
// DELETE of /openapi.json, and the hosted pages it does not list): malformed JSON, broken forms,
// broken multipart, broken CSV, unknown content types, wrong charsets and bodies over the route's
// limit. Each answer is a 4xx in the documented shape (JSON for the API, an HTML page for the
// hosted pages), never a 5xx or a dropped connection, and the server answers /healthz after
// each kind.
import http from 'node:http';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { checkAgainstContract } from '../../helpers/contract.ts';
import { operationsOf } from '../../helpers/fuzz.ts';

let app: TestApp;
let port: number;
let audienceToken: string;
before(async () => {
  app = await startTestApp();
  port = Number(new URL(app.url).port);
  audienceToken = (await app.api.post('/v2/audiences', { name: 'Broken bodies', visibility: 'public' })).body.token;
});
after(() => app.close());

interface Target {
  method: string;
  /** As documented (/v2/domains/{id}), or the hosted page's path. */
  path: string;
  url: string;
  page: boolean;
}

/** Every route that reads a body. Path parameters get a value no row has. */
async function targets(): Promise<Target[]> {
  const document = await (await fetch(`${app.url}/openapi.json`)).json();
  const api = operationsOf(document)
    .filter((operation) => ['POST', 'PATCH', 'PUT', 'DELETE'].includes(operation.method))
    .map((operation) => ({ method: operation.method, path: operation.path, url: operation.path.replace(/\{[^}]+\}/g, 'x'), page: false }));
  const pages = [`/subscribe/${audienceToken}`, '/subscribe/confirm/x', '/subscribe/leave/x', '/unsubscribe/x'].map((url) => ({
    method: 'POST',
    path: url,
    url,
    page: true,
  }));
  return [...api, ...pages];
}

const multipart = (boundary: string, ...parts: string[]) => parts.join('') + `--${boundary}--\r\n`;
const filePart = (boundary: string, name: string | null, content: string, filename = 'contacts.csv') =>
  `--${boundary}\r\nContent-Disposition: form-data${name === null ? '' : `; name="${name}"`}; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n${content}\r\n`;
const CSV = 'email\r\nbroken@example.org';
const MP = 'multipart/form-data; boundary=x';
const JSON_TYPE = 'application/json';

interface Kind {
  name: string;
  contentType: string | null;
  body: string | Buffer;
}

const KINDS: Kind[] = [
  // JSON
  { name: 'truncated JSON', contentType: JSON_TYPE, body: '{"name":"x","to":["a@example.org",' },
  {
    name: 'JSON that is not UTF-8',
    contentType: JSON_TYPE,
    body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]),
  },
  { name: 'JSON nested 10,000 levels', contentType: JSON_TYPE, body: `{"name":${'['.repeat(10_000)}${']'.repeat(10_000)}}` },
  {
    name: 'JSON with huge numbers',
    contentType: JSON_TYPE,
    body: '{"name":1e400,"page":-1e400,"limit":123456789012345678901234567890,"email":1e-400}',
  },
  {
    name: 'JSON with prototype keys',
    contentType: JSON_TYPE,
    body: '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}},"name":{"__proto__":null}}',
  },
  { name: 'a JSON array', contentType: JSON_TYPE, body: '[{"name":"x"}]' },
  { name: 'a JSON string', contentType: JSON_TYPE, body: '"name"' },
  { name: 'an empty body with a JSON type', contentType: JSON_TYPE, body: '' },
  {
    name: 'JSON in another charset',
    contentType: 'application/json; charset=iso-8859-1',
    body: Buffer.from('{"name":"caf\xe9"}', 'latin1'),
  },
  // Forms
  {
    name: 'a broken urlencoded form',
    contentType: 'application/x-www-form-urlencoded',
    body: 'email=%zz%&&=&%E0%A4%A&email[]=1&__proto__[x]=1',
  },
  // Multipart
  { name: 'multipart without its closing boundary', contentType: MP, body: filePart('x', 'file', CSV) },
  { name: 'multipart without a boundary parameter', contentType: 'multipart/form-data', body: multipart('x', filePart('x', 'file', CSV)) },
  { name: 'multipart with another boundary', contentType: MP, body: multipart('y', filePart('y', 'file', CSV)) },
  {
    name: 'multipart with a boundary over 70 characters',
    contentType: `multipart/form-data; boundary=${'b'.repeat(300)}`,
    body: multipart('b'.repeat(300), filePart('b'.repeat(300), 'file', CSV)),
  },
  { name: 'multipart with truncated part headers', contentType: MP, body: '--x\r\nContent-Disposition: form-da' },
  {
    name: 'a multipart part without Content-Disposition',
    contentType: MP,
    body: multipart('x', `--x\r\nContent-Type: text/csv\r\n\r\n${CSV}\r\n`),
  },
  { name: 'a multipart part without a name', contentType: MP, body: multipart('x', filePart('x', null, CSV)) },
  { name: 'an empty multipart file', contentType: MP, body: multipart('x', filePart('x', 'file', '')) },
  {
    name: 'two multipart files',
    contentType: MP,
    body: multipart('x', filePart('x', 'file', CSV), filePart('x', 'file', CSV, 'second.csv')),
  },
  { name: 'a multipart file named 100 kB long', contentType: MP, body: multipart('x', filePart('x', 'file', CSV, 'n'.repeat(100_000))) },
  {
    name: 'an enormous multipart header line before Content-Disposition',
    contentType: MP,
    body: multipart(
      'x',
      `--x\r\nX-Padding: ${'p'.repeat(200_000)}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n${CSV}\r\n`,
    ),
  },
  { name: 'a body that is not multipart with a multipart type', contentType: MP, body: '{"name":"not multipart at all"}' },
  { name: 'an empty body with a multipart type', contentType: MP, body: '' },
  // CSV and other types
  { name: 'CSV with broken quoting', contentType: 'text/csv', body: 'email,first_name\r\n"broken@example.org,"Kim\r\n"unclosed' },
  { name: 'an unknown content type', contentType: 'application/x-postlane-unknown', body: '\u0001\u0002 not a file' },
  { name: 'a body without a content type', contentType: null, body: '{"name":"x"}' },
];

// Bodies some routes read as they are: the import route takes any file, and a file's rows that
// are wrong are skipped, not refused (its summary lists them). Its answers are still held to
// the documented statuses and shapes.
const READ_AS_A_FILE = new Set([
  'JSON with huge numbers',
  'JSON nested 10,000 levels',
  'a JSON array',
  'an unknown content type',
  'a body without a content type',
  'a broken urlencoded form',
  'JSON in another charset',
  'JSON that is not UTF-8',
  'a JSON string',
  'JSON with prototype keys',
  'truncated JSON',
  'CSV with broken quoting',
]);
const IMPORT = '/v2/contacts/import';

// The automation checker's job is to say what is wrong with a well-formed JSON object: one with
// a name nested 10,000 deep, huge numbers or prototype keys gets its 200 with the problems
// listed (held to the documented shape), not a refusal.
const CHECKED_NOT_REFUSED = new Set(['JSON with huge numbers', 'JSON nested 10,000 levels', 'JSON with prototype keys']);
const CHECKER = '/v2/automations/validate';

type Outcome = { kind: 'answer'; status: number; contentType: string; text: string } | { kind: 'no answer'; cause: string };

/** One request on its own connection; `declaredLength` claims a longer body than is sent. */
function send(
  target: Target,
  contentType: string | null,
  body: string | Buffer | null,
  options: { declaredLength?: number; chunks?: { size: number; count: number } } = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { authorization: `Bearer ${app.key}`, connection: 'close' };
    if (contentType !== null) headers['content-type'] = contentType;
    if (options.declaredLength !== undefined) headers['content-length'] = String(options.declaredLength);
    else if (body !== null) headers['content-length'] = String(Buffer.byteLength(body));
    const outgoing = http.request({ host: '127.0.0.1', port, method: target.method, path: target.url, agent: false, headers });
    outgoing.setTimeout(20_000, () => outgoing.destroy(new Error('no answer in 20 s')));
    let answered = false;
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (!answered) resolve({ kind: 'no answer', cause: error.code ?? error.message });
    });
    outgoing.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => resolve({ kind: 'no answer', cause: `answer cut: ${error.message}` }));
      response.on('end', () => {
        resolve({
          kind: 'answer',
          status: response.statusCode ?? 0,
          contentType: String(response.headers['content-type'] ?? ''),
          text: Buffer.concat(chunks).toString('utf8'),
        });
        outgoing.destroy();
      });
    });
    if (options.chunks) {
      // Streamed without a length: the limit is met while reading.
      const chunk = Buffer.alloc(options.chunks.size, 'a');
      let written = 0;
      const write = () => {
        while (written < options.chunks!.count && !answered && !outgoing.destroyed) {
          written++;
          if (!outgoing.write(chunk)) return void outgoing.once('drain', write);
        }
        if (!outgoing.destroyed) outgoing.end();
      };
      outgoing.on('error', () => {});
      return write();
    }
    if (options.declaredLength !== undefined) {
      // The start of the body only: the answer must not wait for the rest.
      outgoing.write(body ?? '');
      return;
    }
    outgoing.end(body ?? undefined);
  });
}

async function assertRefused(target: Target, what: string, outcome: Outcome, allowSuccess = false): Promise<void> {
  const where = `${what} → ${target.method} ${target.url}`;
  assert.equal(outcome.kind, 'answer', `${where}: ${JSON.stringify(outcome)}`);
  if (outcome.kind !== 'answer') return;
  const { status, contentType, text } = outcome;
  assert.ok(status < 500, `${where} answered ${status}: ${text.slice(0, 300)}`);
  if (!allowSuccess) assert.ok(status >= 400, `${where} answered ${status}: ${text.slice(0, 300)}`);
  if (target.page) {
    assert.match(contentType, /^text\/html/, `${where}: a hosted page answers with a page`);
    assert.match(text, /<h1>/, where);
    return;
  }
  assert.match(contentType, /^application\/json/, `${where}: ${contentType}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  // /mcp answers in JSON-RPC: its error is an object with a message.
  const rpcMessage = (body.error as { message?: unknown } | undefined)?.message;
  if (status >= 400)
    assert.ok(
      typeof body.error === 'string' || typeof body.message === 'string' || typeof rpcMessage === 'string',
      `${where}: ${text.slice(0, 300)}`,
    );
  await checkAgainstContract(app.url, target.method, target.path.replace(/\{[^}]+\}/g, 'x'), status, contentType, body);
}

async function stillUp(after: string) {
  const health = await fetch(`${app.url}/healthz`);
  assert.equal(health.status, 200, `the server stopped answering after ${after}`);
}

test('every kind of broken body to every route that takes one: a documented 4xx, never a 5xx or a dropped connection', async () => {
  const all = await targets();
  assert.ok(all.filter((t) => !t.page).length >= 40, `${all.length} routes`);
  for (const kind of KINDS) {
    // A few at a time, each on a connection of its own.
    const queue = [...all];
    const worker = async () => {
      for (let target = queue.shift(); target; target = queue.shift()) {
        const outcome = await send(target, kind.contentType, kind.body);
        const readsIt =
          (target.path === IMPORT && READ_AS_A_FILE.has(kind.name)) || (target.path === CHECKER && CHECKED_NOT_REFUSED.has(kind.name));
        await assertRefused(target, kind.name, outcome, readsIt);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    await stillUp(kind.name);
  }
});

test('bodies over the limit: 413 naming the limit that applied, before the body is read', async () => {
  const all = (await targets()).filter((t) => t.path !== IMPORT); // imports stream files of any size
  // Product events: 64 KB one event, a hundred of them a batch.
  const ONE_EVENT = 64 * 1024;
  const limitOf = (target: Target) =>
    target.page
      ? 16 * 1024
      : target.path === '/v2/forms/{token}/submit'
        ? 256 * 1024
        : target.path.startsWith('/oauth/') || target.path === '/v2/events' || target.path === '/v2/track/{key}'
          ? ONE_EVENT
          : target.path === '/v2/events/batch'
            ? 100 * ONE_EVENT
            : 50 * 1024 * 1024;
  const said = (limit: number) => (limit % (1024 * 1024) === 0 ? `${limit / 1024 / 1024} MB` : `${limit / 1024} KB`);
  const queue = [...all];
  const worker = async () => {
    for (let target = queue.shift(); target; target = queue.shift()) {
      const limit = limitOf(target);
      const type = target.page ? 'application/x-www-form-urlencoded' : JSON_TYPE;
      const outcome = await send(target, type, '{"name":"', { declaredLength: limit + 1 });
      await assertRefused(target, 'a declared length over the limit', outcome);
      assert.equal(outcome.kind === 'answer' && outcome.status, 413, target.url);
      assert.match(outcome.kind === 'answer' ? outcome.text : '', new RegExp(`Request body is larger than ${said(limit)}`), target.url);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  await stillUp('declared lengths over the limit');

  // Streamed without a length, the limit is met while reading.
  const [form, page, send50] = [
    all.find((t) => t.path === '/v2/forms/{token}/submit')!,
    all.find((t) => t.page && t.url.startsWith('/subscribe/') && !t.url.includes('/x'))!,
    all.find((t) => t.path === '/v2/emails' && t.method === 'POST')!,
  ];
  const streamed: Array<[Target, string, number, number]> = [
    [form, JSON_TYPE, 300 * 1024, 256 * 1024],
    [page, 'application/x-www-form-urlencoded', 20 * 1024, 16 * 1024],
    [send50, JSON_TYPE, 51 * 1024 * 1024, 50 * 1024 * 1024],
  ];
  for (const [target, type, size, limit] of streamed) {
    const outcome = await send(target, type, null, { chunks: { size: 64 * 1024, count: Math.ceil(size / (64 * 1024)) } });
    await assertRefused(target, `${size} bytes streamed`, outcome);
    assert.equal(outcome.kind === 'answer' && outcome.status, 413, target.url);
    assert.match(outcome.kind === 'answer' ? outcome.text : '', new RegExp(`Request body is larger than ${said(limit)}`));
  }
  await stillUp('streamed bodies over the limit');
});
