// The public side of forms over HTTP, without a key: the load of a live form, the submit with
// its field checks, the proof of work and the honeypot, CORS for any site, the per-IP limits,
// experiments recorded with a submission, and the workspace's embed script.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { checkAgainstContract } from '../helpers/contract.ts';
import { ChallengeIssuer } from '../../src/resources/forms/challenge.ts';
import { starterDefinition } from '../../src/resources/forms/definition.ts';
import { createLiveForm, solveProof, submitForm } from './helpers.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

const visitor = () => app.as(null);
const submissionsOf = async (formId: string) => (await app.api.get(`/v2/forms/${formId}/submissions?limit=100`)).body.data;

test("the public load: a live form's definition with a proof-of-work challenge, for any origin; 404 for drafts and unknown tokens", async () => {
  const form = await createLiveForm(app.api, { name: 'Public', type: 'flyout', settings: { secret_note: 'not for visitors' } });
  const loaded = await visitor().get(`/v2/forms/${form.token}`, { origin: 'https://shop.example' });
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(loaded.headers.get('access-control-allow-origin'), '*');
  assert.equal(loaded.headers.get('cache-control'), 'no-store');
  const { challenge, definition, ...rest } = loaded.body;
  assert.deepEqual(rest, { object: 'public_form', token: form.token, type: 'flyout', submit_url: `/v2/forms/${form.token}/submit` });
  assert.deepEqual(definition, (await app.api.get(`/v2/forms/${form.id}`)).body.definition);
  assert.ok(!loaded.text.includes('secret_note'), 'settings stay private');
  assert.ok(!loaded.text.includes(form.id), 'the form id stays private');
  assert.equal(challenge.parameters.algorithm, 'SHA-256');
  assert.match(challenge.signature, /^[0-9a-f]{64}$/);

  const draft = await app.api.post('/v2/forms', { name: 'Draft' });
  for (const token of [draft.body.token, 'A'.repeat(32), 'not-a-token', 'x'.repeat(65)]) {
    const response = await visitor().get(`/v2/forms/${encodeURIComponent(token)}`);
    assert.deepEqual([response.status, response.body], [404, { error: 'Form not found' }], token);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
  }
});

test('submit: stored with the form (fsub_), answered with the success step, creating nothing else', async () => {
  const form = await createLiveForm(app.api, { name: 'Store' });
  const eventsBefore = await app.running.ctx.db.selectFrom('events').select('id').execute();
  const accepted = await submitForm(visitor(), form.token, { email: ' Reader@Example.COM ' }, { page_url: 'https://shop.example/blog/1' });
  assert.equal(accepted.status, 201, accepted.text);
  assert.equal(accepted.headers.get('access-control-allow-origin'), '*');
  assert.match(accepted.body.id, /^fsub_[A-Za-z0-9]{27}$/);
  assert.equal(accepted.body.object, 'form_submission');
  assert.deepEqual(accepted.body.success_step, starterDefinition('popup').steps[1]);
  const [stored] = await submissionsOf(form.id);
  assert.equal(stored.id, accepted.body.id);
  assert.equal(stored.created_at, accepted.body.created_at);
  assert.deepEqual(stored.fields, { email: 'reader@example.com' });
  assert.equal(stored.page_url, 'https://shop.example/blog/1');
  // No contact, no event: a submission is only stored with its form.
  const eventsAfter = await app.running.ctx.db.selectFrom('events').select('id').execute();
  assert.equal(eventsAfter.length, eventsBefore.length);

  // Without page_url, the page is the Referer.
  const referred = await submitForm(visitor(), form.token, { email: 'ref@example.com' });
  assert.equal(referred.status, 201);
  const loaded = await visitor().get(`/v2/forms/${form.token}`);
  const withReferer = await visitor().post(
    `/v2/forms/${form.token}/submit`,
    { fields: { email: 'r2@example.com' }, proof: await solveProof(loaded.body.challenge) },
    { referer: 'https://shop.example/landing' },
  );
  assert.equal(withReferer.status, 201);
  const pages = (await submissionsOf(form.id)).map((s: any) => [s.fields.email, s.page_url]);
  assert.deepEqual(pages, [
    ['r2@example.com', 'https://shop.example/landing'],
    ['ref@example.com', null],
    ['reader@example.com', 'https://shop.example/blog/1'],
  ]);
});

test('submit checks the fields against the definition: required inputs, email syntax, option values; each refused field named', async () => {
  const definition = {
    version: 1,
    steps: [
      {
        id: 'f',
        kind: 'form',
        blocks: [
          { id: 'e', type: 'email', name: 'email', label: 'Email', required: true },
          { id: 'n', type: 'text_input', name: 'first_name', label: 'First name' },
          { id: 'p', type: 'phone', name: 'phone', label: 'Phone' },
          { id: 'd', type: 'date', name: 'birthday', label: 'Birthday' },
          { id: 'r', type: 'radio', name: 'size', label: 'Size', required: true, options: ['S', 'M', 'L'] },
          { id: 'dd', type: 'dropdown', name: 'country', label: 'Country', options: [{ label: 'France', value: 'FR' }] },
          { id: 'c', type: 'checkbox', name: 'consent', label: 'I agree', required: true },
          { id: 'cg', type: 'checkbox', name: 'topics', label: 'Topics', options: ['news', 'deals'] },
          { id: 's', type: 'button', label: 'Join', action: 'submit' },
        ],
      },
      { id: 'ok', kind: 'success', blocks: [{ id: 't', type: 'text', content: 'Welcome' }] },
    ],
  };
  const form = await createLiveForm(app.api, { name: 'Fields', type: 'embed', definition });
  const loaded = await visitor().get(`/v2/forms/${form.token}`);
  const proof = await solveProof(loaded.body.challenge);
  const refused = await visitor().post(`/v2/forms/${form.token}/submit`, {
    fields: { email: 'nope', size: 'XL', country: 'US', consent: false, topics: ['news', 'spam'], birthday: '2025-13-01', phone: 'abc' },
    proof,
  });
  assert.equal(refused.status, 400);
  assert.deepEqual(refused.body, {
    message: 'Validation failed',
    errors: {
      email: ['Enter a valid email address'],
      phone: ['Enter a valid phone number'],
      birthday: ['Enter a date as YYYY-MM-DD'],
      size: ['Choose one of the options'],
      country: ['Choose one of the options'],
      consent: ['This field is required'],
      topics: ['Choose among the options'],
    },
  });
  const empty = await visitor().post(`/v2/forms/${form.token}/submit`, { fields: {}, proof });
  assert.deepEqual(Object.keys(empty.body.errors), ['email', 'size', 'consent']);
  assert.deepEqual(await submissionsOf(form.id), [], 'nothing stored');

  // The same proof is still good: refused fields use it up no more than they store anything.
  const accepted = await visitor().post(`/v2/forms/${form.token}/submit`, {
    fields: {
      email: 'ok@example.com',
      first_name: 'Ada',
      size: 'M',
      country: 'FR',
      consent: true,
      topics: ['deals'],
      birthday: '1990-05-17',
      phone: '+44 20 7946 0958',
      unknown: 'dropped',
    },
    proof,
  });
  assert.equal(accepted.status, 201, accepted.text);
  assert.deepEqual((await submissionsOf(form.id))[0].fields, {
    email: 'ok@example.com',
    first_name: 'Ada',
    size: 'M',
    country: 'FR',
    consent: true,
    topics: ['deals'],
    birthday: '1990-05-17',
    phone: '+44 20 7946 0958',
  });

  for (const body of [{}, { fields: 'email=x' }, { fields: {}, proof: { challenge: {}, solution: {} } }]) {
    const bad = await visitor().post(`/v2/forms/${form.token}/submit`, body);
    assert.equal(bad.status, 400, JSON.stringify(body));
    assert.ok(Array.isArray(bad.body.details));
  }
});

test('abuse: a bot posting without solving the challenge is refused; forged, foreign, expired and reused proofs too', async () => {
  const form = await createLiveForm(app.api, { name: 'Guarded' });
  const other = await createLiveForm(app.api, { name: 'Other' });
  const post = (proof: unknown) =>
    visitor().post(`/v2/forms/${form.token}/submit`, { fields: { email: 'bot@example.com' }, ...(proof ? { proof } : {}) });

  const none = await post(undefined);
  assert.deepEqual([none.status, none.body.error], [403, 'Proof of work required']);
  assert.match(none.body.message, /Solve the challenge/);

  const loaded = await visitor().get(`/v2/forms/${form.token}`);
  const real = await solveProof(loaded.body.challenge);
  // A guessed answer, an altered challenge (an easier prefix), a challenge made up by the bot.
  const guessed = await post({ ...real, solution: { counter: 1, derivedKey: 'ab'.repeat(32) } });
  assert.deepEqual([guessed.status, guessed.body.error], [403, 'Proof of work invalid']);
  const altered = await post({ ...real, challenge: { ...real.challenge, parameters: { ...real.challenge.parameters, keyPrefix: '00' } } });
  assert.deepEqual([altered.status, altered.body.error], [403, 'Proof of work invalid']);
  const unsigned = await post({ challenge: { parameters: real.challenge.parameters }, solution: real.solution });
  assert.deepEqual([unsigned.status, unsigned.body.error], [403, 'Proof of work invalid']);
  // Solved for another form.
  const foreign = await solveProof((await visitor().get(`/v2/forms/${other.token}`)).body.challenge);
  const elsewhere = await post(foreign);
  assert.deepEqual([elsewhere.status, elsewhere.body.message], [403, 'The challenge was issued for another form']);
  // Expired: a challenge from this server's issuer that outlived its hour.
  const stale = await new ChallengeIssuer(app.running.ctx.verpSecret, -60).issue(form.token);
  const expired = await post(await solveProof(stale as never));
  assert.deepEqual([expired.status, expired.body.error], [403, 'Proof of work expired']);
  assert.deepEqual(await submissionsOf(form.id), []);

  const first = await post(real);
  assert.equal(first.status, 201);
  const replay = await post(real);
  assert.deepEqual([replay.status, replay.body.error], [403, 'Proof of work already used']);
  assert.equal((await submissionsOf(form.id)).length, 1);
});

test('abuse: a filled honeypot is answered like a success and stores nothing', async () => {
  const form = await createLiveForm(app.api, { name: 'Honey' });
  const trapped = await submitForm(visitor(), form.token, { email: 'bot@example.com' }, { honeypot: 'https://spam.example' });
  assert.equal(trapped.status, 201);
  assert.match(trapped.body.id, /^fsub_/);
  assert.deepEqual(await submissionsOf(form.id), []);
  const person = await submitForm(visitor(), form.token, { email: 'person@example.com' }, { honeypot: '' });
  assert.equal(person.status, 201);
  assert.equal((await submissionsOf(form.id)).length, 1);
});

test("CORS: the submit's preflight allows any site", async () => {
  const form = await createLiveForm(app.api, { name: 'Cors' });
  const preflight = await fetch(`${app.url}/v2/forms/${form.token}/submit`, {
    method: 'OPTIONS',
    headers: { origin: 'https://any.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
  assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
  assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /content-type/);
});

test('experiments: the variant a submission came from is recorded, and its own steps are the ones checked', async () => {
  const definition = structuredClone(starterDefinition('popup')) as any;
  const variantSteps = structuredClone(definition.steps);
  variantSteps[0].blocks.splice(2, 0, { id: 'name', type: 'text_input', name: 'first_name', label: 'First name', required: true });
  definition.experiments = [
    {
      id: 'ask-name',
      variants: [
        { id: 'control', weight: 1 },
        { id: 'with-name', weight: 1, steps: variantSteps },
      ],
    },
  ];
  const form = await createLiveForm(app.api, { name: 'Experiment', definition });

  const control = await submitForm(visitor(), form.token, { email: 'a@example.com' }, { experiment_id: 'ask-name', variant_id: 'control' });
  assert.equal(control.status, 201);
  const needsName = await submitForm(
    visitor(),
    form.token,
    { email: 'b@example.com' },
    { experiment_id: 'ask-name', variant_id: 'with-name' },
  );
  assert.deepEqual([needsName.status, needsName.body.errors], [400, { first_name: ['This field is required'] }]);
  const named = await submitForm(
    visitor(),
    form.token,
    { email: 'b@example.com', first_name: 'Bea' },
    { experiment_id: 'ask-name', variant_id: 'with-name' },
  );
  assert.equal(named.status, 201);
  const unknown = await submitForm(visitor(), form.token, { email: 'c@example.com' }, { experiment_id: 'ask-name', variant_id: 'nope' });
  assert.equal(unknown.status, 201);
  const recorded = (await submissionsOf(form.id)).map((s: any) => [s.fields.email, s.experiment_id, s.variant_id]);
  assert.deepEqual(recorded, [
    ['c@example.com', null, null],
    ['b@example.com', 'ask-name', 'with-name'],
    ['a@example.com', 'ask-name', 'control'],
  ]);
  const filtered = await app.api.get(`/v2/forms/${form.id}/submissions?variant_id.exact=with-name`);
  assert.deepEqual(
    filtered.body.data.map((s: any) => s.fields.first_name),
    ['Bea'],
  );
});

/** A request from another loopback address (the limits are per IP), checked against the contract. */
function fromAddress(
  localAddress: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, app.url);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(url, { method, localAddress, headers: payload ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', async () => {
        const parsed = text ? JSON.parse(text) : undefined;
        try {
          await checkAgainstContract(app.url, method, path, res.statusCode!, String(res.headers['content-type'] ?? ''), parsed);
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

test('limits per IP: 60 public loads and 30 submits a minute, then 429 with retry-after; other addresses are not held back', async () => {
  const form = await createLiveForm(app.api, { name: 'Limited' });
  for (let i = 0; i < 60; i++)
    assert.equal((await fromAddress('127.0.0.2', 'GET', `/v2/forms/${form.token}`)).status, 200, `load ${i + 1}`);
  const refused = await fromAddress('127.0.0.2', 'GET', `/v2/forms/${form.token}`);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error, 'Rate limit exceeded');
  assert.equal(refused.body.limit, 60);
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  assert.equal(refused.headers['access-control-allow-origin'], '*');
  // Unknown tokens count as well: the limit is on loads from the address, not per form.
  assert.equal((await fromAddress('127.0.0.2', 'GET', '/v2/forms/unknown')).status, 429);
  const elsewhere = await fromAddress('127.0.0.3', 'GET', `/v2/forms/${form.token}`);
  assert.equal(elsewhere.status, 200);

  for (let i = 0; i < 30; i++)
    assert.equal((await fromAddress('127.0.0.4', 'POST', `/v2/forms/${form.token}/submit`, { fields: {} })).status, 403, `submit ${i + 1}`);
  const tooMany = await fromAddress('127.0.0.4', 'POST', `/v2/forms/${form.token}/submit`, {
    fields: { email: 'late@example.com' },
    proof: await solveProof(elsewhere.body.challenge),
  });
  assert.equal(tooMany.status, 429);
  assert.equal(tooMany.body.limit, 30);
  assert.deepEqual(await submissionsOf(form.id), [], 'a refused submit stores nothing');
  const stillOpen = await fromAddress('127.0.0.3', 'POST', `/v2/forms/${form.token}/submit`, {
    fields: { email: 'other@example.com' },
    proof: await solveProof(elsewhere.body.challenge),
  });
  assert.equal(stillOpen.status, 201);
});

test('the embed script: one per workspace, under 10 kB gzipped, naming only live forms; unknown keys are 404', async () => {
  const { api } = await app.newWorkspace();
  const live = await createLiveForm(api, { name: 'Live popup' });
  const inline = await createLiveForm(api, { name: 'Inline', type: 'embed' });
  const draft = await api.post('/v2/forms', { name: 'Draft' });
  const key = (await api.get('/v2/forms/embed')).body.public_key;
  const url = `${app.url}/js/${key}/postlane.js`;

  const plain = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(plain.status, 200);
  assert.match(plain.headers.get('content-type') ?? '', /^application\/javascript/);
  assert.match(plain.headers.get('cache-control') ?? '', /max-age=60/);
  const code = await plain.text();
  assert.ok(code.includes(live.token) && code.includes(inline.token));
  assert.ok(!code.includes(draft.body.token), 'a draft is not in the script');
  // Another workspace's forms are not in it either.
  const mine = await createLiveForm(app.api, { name: 'Not theirs' });
  assert.ok(!(await (await fetch(url)).text()).includes(mine.token));

  const gzipped = await new Promise<Buffer>((resolve, reject) => {
    httpRequest(url, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      assert.equal(res.headers['content-encoding'], 'gzip');
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks)));
    })
      .on('error', reject)
      .end();
  });
  assert.ok(gzipped.length < 10 * 1024, `${gzipped.length} bytes gzipped`);
  assert.equal(gunzipSync(gzipped).toString(), code);

  const etag = plain.headers.get('etag')!;
  assert.equal((await fetch(url, { headers: { 'if-none-match': etag } })).status, 304);
  await api.post(`/v2/forms/${inline.id}/unpublish`);
  const changed = await fetch(url, { headers: { 'if-none-match': etag } });
  assert.equal(changed.status, 200);
  assert.ok(!(await changed.text()).includes(inline.token));

  for (const bad of ['AAAAAAAAAAAAAAAAAAAAAAAA', 'not-a-key']) assert.equal((await fetch(`${app.url}/js/${bad}/postlane.js`)).status, 404);
});
