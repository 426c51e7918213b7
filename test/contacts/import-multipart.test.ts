// POST /v2/contacts/import with broken multipart/form-data bodies: each one a 400 that says what
// is wrong, no contact written, and the server still up (a body without its closing boundary
// used to end the process with an unhandled stream error). Sound uploads still import.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

const part = (name: string | null, content: string, filename = 'contacts.csv', boundary = 'x') =>
  `--${boundary}\r\nContent-Disposition: form-data${name === null ? '' : `; name="${name}"`}; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n${content}\r\n`;
const closed = (...parts: string[]) => `${parts.join('')}--x--\r\n`;

async function importBody(body: string, contentType = 'multipart/form-data; boundary=x') {
  const response = await fetch(`${app.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function contactCount(): Promise<number> {
  const response = await fetch(`${app.url}/v2/contacts?per_page=1`, { headers: { authorization: `Bearer ${app.key}` } });
  return ((await response.json()) as { total_records: number }).total_records;
}

const BROKEN: Array<[string, string, string, string?]> = [
  [
    'no closing boundary',
    part('file', 'email\r\na@example.org'),
    'The multipart body ends before its closing boundary: the upload is incomplete',
  ],
  [
    'headers cut short',
    '--x\r\nContent-Disposition: form-da',
    'The multipart body ends before its closing boundary: the upload is incomplete',
  ],
  [
    'another boundary',
    closed(part('file', 'email\r\na@example.org', 'a.csv', 'y')).replace('--x--', '--y--'),
    'The multipart body ends before its closing boundary: the upload is incomplete',
  ],
  [
    'no boundary parameter',
    closed(part('file', 'email\r\na@example.org')),
    'A multipart/form-data body needs a boundary parameter in its Content-Type (multipart/form-data; boundary=...)',
    'multipart/form-data',
  ],
  [
    'an empty boundary parameter',
    closed(part('file', 'email\r\na@example.org')),
    'A multipart/form-data body needs a boundary parameter in its Content-Type (multipart/form-data; boundary=...)',
    'multipart/form-data; boundary=',
  ],
  [
    'a boundary over 70 characters',
    'x',
    'The multipart boundary is longer than 70 characters',
    `multipart/form-data; boundary=${'b'.repeat(300)}`,
  ],
  [
    'no Content-Disposition',
    closed('--x\r\nContent-Type: text/csv\r\n\r\nemail\r\na@example.org\r\n'),
    'Send the file as a multipart part named file',
  ],
  [
    'a file part without a name',
    closed(part(null, 'email\r\na@example.org')),
    'A multipart file part has no name: send the file as a part named file',
  ],
  [
    'a file part named otherwise',
    closed(part('upload', 'email\r\na@example.org')),
    'Send the file as a multipart part named file (this one is named "upload")',
  ],
  ['an empty file', closed(part('file', '')), 'The file part file is empty'],
  [
    'two files',
    closed(part('file', 'email\r\na@example.org'), part('file', 'email\r\nb@example.org', 'b.csv')),
    'Send one file per request: the multipart body has more than one file part',
  ],
  [
    'a file name of 100,000 characters',
    closed(part('file', 'email\r\na@example.org', 'n'.repeat(100_000))),
    'The file name is longer than 1000 characters',
  ],
  [
    'an enormous header line before Content-Disposition',
    closed(`--x\r\nX-Padding: ${'p'.repeat(200_000)}\r\n${part('file', 'email\r\na@example.org').slice(5)}`),
    'Send the file as a multipart part named file',
  ],
  ['JSON sent as multipart', '{"email":"a@example.org"}', 'The multipart body ends before its closing boundary: the upload is incomplete'],
  [
    'a prototype name',
    closed('--x\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n', part('file', 'email\r\na@example.org')),
    'A multipart part may not be named __proto__, constructor or another built-in property name',
  ],
];

test('broken multipart bodies: 400 saying what is wrong, nothing written, the server still up', async () => {
  for (const [what, body, message, contentType] of BROKEN) {
    const answer = await importBody(body, contentType);
    assert.deepEqual(answer, { status: 400, body: { error: message } }, what);
    assert.equal((await fetch(`${app.url}/healthz`)).status, 200, `up after ${what}`);
  }
  assert.equal(await contactCount(), 0);
});

test('a large upload cut short (parsed in a worker): the import fails with the reason, its last rows unwritten', async () => {
  const rows = Array.from({ length: 20_000 }, (_, i) => `big${i}@example.org`).join('\r\n');
  const answer = await importBody(part('file', `email\r\n${rows}`));
  assert.ok(answer.status === 400 || answer.status === 422, JSON.stringify(answer));
  assert.equal(answer.body.status, 'failed');
  assert.match(
    String(answer.body.error),
    /^The multipart body ends before its closing boundary: the upload is incomplete\. Rows up to \d+ are committed/,
  );
  // The file's last rows never count as written: a cut body may end inside an address.
  assert.ok(Number(answer.body.committed_rows) < 20_000, JSON.stringify(answer.body));
  assert.ok(!(await app.api.get('/v2/contacts/big19999%40example.org')).body?.email);
  assert.equal((await fetch(`${app.url}/healthz`)).status, 200);
});

test('sound multipart uploads still import, with the audience as a field before the file', async () => {
  const audience = (await app.api.post('/v2/audiences', { name: 'Uploaded' })).body;
  const answer = await importBody(
    closed(
      `--x\r\nContent-Disposition: form-data; name="audience_id"\r\n\r\n${audience.id}\r\n`,
      part('file', 'email\r\nok@example.org'),
      '--x\r\nContent-Disposition: form-data; name="note"\r\n\r\nafter the file\r\n',
    ),
  );
  assert.equal(answer.status, 200, JSON.stringify(answer));
  assert.equal(answer.body.created, 1);
  assert.equal(answer.body.audience_id, audience.id);
});
