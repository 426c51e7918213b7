// A large import (parsed in a worker thread, which costs about half a second of CPU to start)
// that fails on its first bytes is refused before any worker is started, with the same 400
// and message as before, as a plain body, a chunked one and a multipart upload; a large good
// file still goes to a worker and imports with its progress lines.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { BATCH_ROWS } from '../../src/resources/contacts/import/run.ts';

let app: TestApp;
let workersStarted = 0;
const onWorker = () => workersStarted++;
before(async () => {
  app = await startTestApp();
  subscribe('worker_threads', onWorker);
});
after(async () => {
  unsubscribe('worker_threads', onWorker);
  await app.close();
});

/** Over the size parsed on the server's own thread (256 kB). */
const LARGE = 400_000;
const filler = (line: string) => line.repeat(Math.ceil(LARGE / line.length));

type Body = string | (() => AsyncIterable<Uint8Array>);
async function importing(key: string, body: Body, type: string, accept = 'application/json') {
  const before = workersStarted;
  const chunked = typeof body === 'function';
  const response = await fetch(`${app.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': type, accept },
    body: chunked ? (ReadableStreamFrom(body()) as BodyInit) : body,
    ...(chunked ? { duplex: 'half' } : {}),
  } as RequestInit);
  const text = await response.text();
  return { status: response.status, text, workers: workersStarted - before };
}

function ReadableStreamFrom(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
}

/** A body sent in pieces without a content-length (chunked): the server cannot know its size. */
const inPieces = (text: string) =>
  async function* () {
    for (let i = 0; i < text.length; i += 16_384) yield new TextEncoder().encode(text.slice(i, i + 16_384));
  };

test("a large file that fails on its first bytes: 400 with the parser's message, and no worker thread started", async () => {
  const { key, api } = await app.newWorkspace();
  const cases: Array<{ what: string; body: Body; type: string; error: RegExp }> = [
    {
      what: 'CSV without an email column',
      body: `name,phone\n${filler('Ann,123\n')}`,
      type: 'text/csv',
      error: /^The CSV header has no email column/,
    },
    {
      what: 'the same, chunked',
      body: inPieces(`\uFEFF\r\nname,"phone\nnumber"\r\n${filler('Ann,123\r\n')}`),
      type: 'text/csv',
      error: /^The CSV header has no email column/,
    },
    {
      what: 'CSV with an unreadable header',
      body: `email,"na"me\n${filler('a@example.com,Ann\n')}`,
      type: 'text/csv',
      error: /^The CSV could not be read at row 1/,
    },
    {
      what: 'CSV whose header row never ends',
      body: inPieces('email,' + 'x'.repeat(1_100_000)),
      type: 'text/csv',
      error: /^The CSV could not be read at row 1/,
    },
    {
      what: 'JSON that is not an array',
      body: ` {${filler('"email":"a@example.com",')}}`,
      type: 'application/json',
      error: /^A JSON import must be an array of objects/,
    },
  ];
  for (const { what, body, type, error } of cases) {
    const answer = await importing(key, body, type);
    assert.equal(answer.status, 400, `${what}: ${answer.text.slice(0, 300)}`);
    const summary = JSON.parse(answer.text);
    assert.deepEqual([summary.status, summary.committed_rows, summary.created], ['failed', 0, 0], what);
    assert.match(summary.error, error, what);
    assert.equal(answer.workers, 0, `${what}: no worker thread`);
  }
  // As a multipart upload too.
  const form = new FormData();
  form.append('file', new Blob([`first_name\n${filler('Ann\n')}`], { type: 'text/csv' }), 'people.csv');
  const before = workersStarted;
  const multipart = await fetch(`${app.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  assert.equal(multipart.status, 400);
  assert.match(((await multipart.json()) as { error: string }).error, /no email column/);
  assert.equal(workersStarted - before, 0, 'multipart: no worker thread');
  assert.equal((await api.get('/v2/contacts')).body.data.length, 0, 'nothing imported');
});

test('a large good file still goes to a worker thread and imports with its progress lines; one that breaks later is refused by it', async () => {
  const { key, api } = await app.newWorkspace({ plan: 'custom' });
  const rows = BATCH_ROWS * 2 + 5;
  // A byte-order mark, an empty line (not a row), CRLF line ends, a quoted header: all read as before.
  const csv = `\uFEFF\r\n"email","first_name"\r\n${Array.from({ length: rows }, (_, i) => `large${i}@example.com,Someone with a long enough name ${i}`).join('\r\n')}`;
  assert.ok(csv.length > LARGE);
  for (const body of [csv, inPieces(csv)]) {
    const answer = await importing(key, body, 'text/csv', 'application/x-ndjson');
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
    assert.equal(answer.workers, 1);
    const lines = answer.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.slice(0, -1).map((p) => [p.object, p.committed_rows]),
      [
        ['contact_import_progress', BATCH_ROWS + 1],
        ['contact_import_progress', BATCH_ROWS * 2 + 1],
        ['contact_import_progress', rows + 1],
      ],
    );
    assert.equal(lines.at(-1).status, 'completed');
    assert.equal(lines.at(-1).created + lines.at(-1).unchanged, rows);
  }
  assert.equal((await api.get('/v2/contacts/large7%40example.com')).body.first_name, 'Someone with a long enough name 7');
  // A good start and a break later: the worker meets it, as before.
  const broken = await importing(key, `[${filler('{"email":"b@example.com"},')}{"email":`, 'application/json');
  assert.equal(broken.workers, 1);
  assert.equal(broken.status, 422, broken.text.slice(0, 300));
  assert.match(JSON.parse(broken.text).error, /not closed/);
});
