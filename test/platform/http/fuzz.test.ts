// Bad input never breaks the server (docs/performance.md, "fuzz"): hostile requests to every
// operation of /openapi.json get a documented 4xx (every answer is held against the document),
// never a 5xx, a stack trace or SQL, and the server stays up. The `fuzz` bench scenario runs
// 100,000 of them; here a bounded, reproducible sample. Both send through node:http, so path tricks
// (%2e%2e, .., %2f) reach the server as generated, not resolved by a URL parser first.
import http from 'node:http';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { checkAgainstContract } from '../../helpers/contract.ts';
import { documentedUrlOf, hostileRequests, LEAK, operationsOf, sendAsIs } from '../../helpers/fuzz.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

const PER_OPERATION = Number(process.env.FUZZ_PER_OPERATION ?? 25);
/** Longer than any answer should take: a request left unanswered fails the test, named. */
const ANSWER_TIMEOUT_MS = 30_000;

test('hostile requests to every operation: documented 4xx answers, no 5xx, nothing leaked', async () => {
  const document = await (await fetch(`${app.url}/openapi.json`)).json();
  const operations = operationsOf(document);
  assert.ok(operations.length >= 50);
  const seed = Number(process.env.FUZZ_SEED ?? 20261125);
  const requests = hostileRequests(operations, PER_OPERATION, seed);
  const port = Number(new URL(app.url).port);
  const headers = { authorization: `Bearer ${app.key}`, 'content-type': 'application/json' };
  const statuses = new Map<number, number>();
  // A few at a time, as clients would, each on a kept-alive connection of its own (a body the
  // server left unread would hang the next request on it): every answer is checked all the same.
  let next = 0;
  const worker = async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let request = requests[next++]; request; request = requests[next++]) {
        const where = `${request.method} ${request.url.slice(0, 200)} (seed ${seed})`;
        const outcome = await sendAsIs(port, agent, headers, request, ANSWER_TIMEOUT_MS);
        assert.equal(outcome.kind, 'answer', `${where}: ${JSON.stringify(outcome)}`);
        if (outcome.kind !== 'answer') return;
        const { status, text, contentType } = outcome;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        assert.ok(status < 500, `${where} answered ${status}: ${text.slice(0, 300)}`);
        if (status >= 400) assert.doesNotMatch(text, LEAK, `${where} leaked: ${text.slice(0, 300)}`);
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: checked as text
        }
        // Held against what the generating operation documents, whatever the path holds.
        await checkAgainstContract(app.url, request.method, documentedUrlOf(request), status, contentType, body);
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  assert.equal((await fetch(`${app.url}/healthz`)).status, 200, 'still up');
  // The sample reached past the schemas too (not only 400s).
  assert.ok(
    [...statuses.keys()].some((s) => s !== 400),
    JSON.stringify(Object.fromEntries(statuses)),
  );
});

test('NUL characters are refused with a 400 in bodies, paths and query strings, on both engines', async () => {
  const refused = { statusCode: 400, error: 'Bad Request', message: 'Text may not contain NUL (\\u0000) characters' };
  const body = await app.api.post('/v2/suppressions', { email: 'a\u0000b@example.org' });
  assert.deepEqual([body.status, body.body], [400, refused]);
  const path = await app.api.get('/v2/suppressions/a%00b%40example.org');
  assert.deepEqual([path.status, path.body], [400, refused]);
  const search = await app.api.get('/v2/suppressions?search=%00');
  assert.deepEqual([search.status, search.body], [400, refused]);
  // A backslash followed by "u0000" is only text, and allowed.
  const literal = await app.api.post('/v2/suppressions', { email: 'literal@example.org', reason: 'the text \\u0000' });
  assert.equal(literal.status, 201, literal.text);
  assert.equal(literal.body.reason, 'the text \\u0000');
});
