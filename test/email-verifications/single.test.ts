// POST /v2/email-verifications (https://emailit.com/docs/api-reference/email-verifications.md)
// against loopback DNS, RDAP and mail servers that answer as real ones do: every result and every
// check, both modes, credits, errors, event.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startVerificationApp, type VerificationApp } from './helpers.ts';
import { checkEventPayload } from '../../src/resources/events/payloads.ts';
import { getCredits } from '../../src/platform/credits.ts';

let app: VerificationApp;
before(async () => {
  app = await startVerificationApp();
});
after(() => app.close());

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

async function verify(email: unknown, mode?: string, api = app.api) {
  const res = await api.post('/v2/email-verifications', mode === undefined ? { email } : { email, mode });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

const NO_MAILBOX = { smtp_connect: null, deliverable: null, inbox_full: null, disabled: null, catch_all: null };
const MAILBOX_OK = { smtp_connect: true, deliverable: true, inbox_full: false, disabled: false, catch_all: false };
const PLAIN = { valid_syntax: true, disposable: false, role_account: false, free_email: false, gibberish: false, has_mx_records: true };

/** domain_age is days since a registration made relative to now: allow the day boundary. */
function assertAge(actual: number | null, expected: number) {
  assert.ok(actual !== null && Math.abs(actual - expected) <= 1, `domain_age ${actual}, expected about ${expected}`);
}

test('fast mode: a good address is safe; every field of the object; no connection to the mail server', async () => {
  const before = app.mx.connections;
  const ev = await verify('jane@acme.test');
  assert.match(ev.id, /^ev_[A-Za-z0-9]{27}$/);
  assert.match(ev.created_at, ISO_MICROS);
  assert.match(ev.updated_at, ISO_MICROS);
  assertAge(ev.checks.domain_age, 3650);
  assert.deepEqual(ev, {
    object: 'email_verification',
    id: ev.id,
    email: 'jane@acme.test',
    status: 'completed',
    score: 100,
    risk: 'low',
    result: 'safe',
    mode: 'fast',
    checks: { ...PLAIN, domain_age: ev.checks.domain_age, ...NO_MAILBOX },
    address: { mailbox: 'jane', domain: 'acme.test', suffix: null, root: 'jane@acme.test' },
    did_you_mean: null,
    mx_records: [{ priority: 10, exchange: 'mx.acme.test' }],
    mailbox_check: null,
    created_at: ev.created_at,
    updated_at: ev.updated_at,
  });
  assert.equal(app.mx.connections, before, 'fast mode asks no mail server');
});

test('full mode: an existing mailbox; EHLO with MAIL_HOSTNAME, MAIL FROM a service address, RCPT the address and a random one, never DATA', async () => {
  app.mx.reset();
  const ev = await verify('jane@acme.test', 'full');
  assert.equal(ev.mode, 'full');
  assert.equal(ev.result, 'safe');
  assert.equal(ev.score, 100);
  assert.equal(ev.risk, 'low');
  assert.deepEqual({ ...ev.checks, domain_age: 0 }, { ...PLAIN, domain_age: 0, ...MAILBOX_OK });
  assert.deepEqual(ev.mailbox_check, {
    outcome: 'accepted',
    mx_host: 'mx.acme.test',
    code: 250,
    enhanced_code: null,
    message: ev.mailbox_check.message,
  });
  assert.equal(app.mx.connections, 1);
  assert.deepEqual(app.mx.helloNames, ['mail.postlane.test']);
  assert.deepEqual(app.mx.mailFroms, ['verify@mail.postlane.test']);
  assert.equal(app.mx.rcpts.length, 2);
  assert.equal(app.mx.rcpts[0], 'jane@acme.test');
  assert.match(app.mx.rcpts[1], /^[a-z0-9-]+@acme\.test$/);
  assert.notEqual(app.mx.rcpts[1], 'jane@acme.test');
  assert.equal(app.mx.dataCommands, 0);
});

test('full mode: a mailbox that does not exist (550 5.1.1) is not deliverable: score 0, unknown, high risk', async () => {
  const ev = await verify('paul.smith@acme.test', 'full');
  assert.deepEqual(
    { ...ev.checks, domain_age: 0 },
    { ...PLAIN, domain_age: 0, smtp_connect: true, deliverable: false, inbox_full: false, disabled: false, catch_all: false },
  );
  assert.equal(ev.score, 0);
  assert.equal(ev.result, 'unknown');
  assert.equal(ev.risk, 'high');
  assert.equal(ev.mailbox_check.outcome, 'rejected');
  assert.equal(ev.mailbox_check.code, 550);
  assert.equal(ev.mailbox_check.enhanced_code, '5.1.1');
  assert.match(ev.mailbox_check.message, /User unknown/);
});

test('full mode: a full mailbox (452 4.2.2 and 552 5.2.2) is inbox_full', async () => {
  for (const [local, code, enhanced] of [
    ['full', 452, '4.2.2'],
    ['fullhard', 552, '5.2.2'],
  ] as const) {
    const ev = await verify(`${local}@acme.test`, 'full');
    assert.deepEqual(
      { ...ev.checks, domain_age: 0 },
      { ...PLAIN, domain_age: 0, smtp_connect: true, deliverable: false, inbox_full: true, disabled: false, catch_all: false },
      local,
    );
    assert.equal(ev.result, 'inbox_full');
    assert.equal(ev.score, 50);
    assert.equal(ev.risk, 'medium');
    assert.deepEqual([ev.mailbox_check.outcome, ev.mailbox_check.code, ev.mailbox_check.enhanced_code], ['inbox_full', code, enhanced]);
  }
});

test('full mode: a disabled mailbox (550 5.2.1) is disabled, high risk', async () => {
  const ev = await verify('disabled@acme.test', 'full');
  assert.deepEqual(
    { ...ev.checks, domain_age: 0 },
    { ...PLAIN, domain_age: 0, smtp_connect: true, deliverable: false, inbox_full: false, disabled: true, catch_all: false },
  );
  assert.equal(ev.result, 'disabled');
  assert.equal(ev.score, 0);
  assert.equal(ev.risk, 'high');
  assert.deepEqual([ev.mailbox_check.outcome, ev.mailbox_check.code, ev.mailbox_check.enhanced_code], ['disabled', 550, '5.2.1']);
});

test('full mode: a catch-all domain accepts the random address too: catch_all, not confirmed, unknown', async () => {
  const ev = await verify('someone@catchall.test', 'full');
  assert.deepEqual(ev.checks, {
    ...PLAIN,
    domain_age: null,
    smtp_connect: true,
    deliverable: true,
    inbox_full: false,
    disabled: false,
    catch_all: true,
  });
  assert.equal(ev.score, 65);
  assert.equal(ev.result, 'unknown');
  assert.equal(ev.risk, 'medium');
  assert.equal(ev.mailbox_check.outcome, 'accepted');
});

test('full mode: greylisting (451 4.7.1) is reported as such, nothing about the mailbox guessed', async () => {
  const ev = await verify('jane@grey.test', 'full');
  assert.deepEqual(ev.checks, {
    ...PLAIN,
    domain_age: null,
    smtp_connect: true,
    deliverable: null,
    inbox_full: null,
    disabled: null,
    catch_all: null,
  });
  assert.deepEqual([ev.mailbox_check.outcome, ev.mailbox_check.code, ev.mailbox_check.enhanced_code], ['greylisted', 451, '4.7.1']);
  assert.equal(ev.score, 65);
  assert.equal(ev.result, 'unknown');
  assert.equal(ev.status, 'completed');
});

test('full mode: a server that never greets and one that stops answering at RCPT are timeouts', async () => {
  const silent = await verify('jane@silent.test', 'full');
  assert.deepEqual(silent.checks, {
    ...PLAIN,
    domain_age: null,
    smtp_connect: false,
    deliverable: null,
    inbox_full: null,
    disabled: null,
    catch_all: null,
  });
  assert.equal(silent.mailbox_check.outcome, 'timeout');
  assert.equal(silent.mailbox_check.mx_host, 'mx.silent.test');
  assert.equal(silent.mailbox_check.code, null);
  assert.equal(silent.result, 'unknown');
  assert.equal(silent.score, 65);
  assert.ok(app.silent.connections >= 1);

  const stalled = await verify('jane@stall.test', 'full');
  assert.deepEqual(stalled.checks, {
    ...PLAIN,
    domain_age: null,
    smtp_connect: true,
    deliverable: null,
    inbox_full: null,
    disabled: null,
    catch_all: null,
  });
  assert.equal(stalled.mailbox_check.outcome, 'timeout');
  assert.equal(stalled.result, 'unknown');
});

test('invalid: bad syntax, no MX (A record only), a null MX and a domain that does not exist; still 200 and charged', async () => {
  const credits = await getCredits(app.running.ctx.db, app.workspace.id);
  const bad = await verify('not an address', 'full');
  assert.equal(bad.result, 'invalid');
  assert.equal(bad.score, 0);
  assert.equal(bad.risk, 'high');
  assert.deepEqual(bad.checks, {
    valid_syntax: false,
    disposable: false,
    role_account: false,
    free_email: false,
    gibberish: false,
    has_mx_records: false,
    domain_age: null,
    smtp_connect: false,
    deliverable: false,
    inbox_full: null,
    disabled: null,
    catch_all: null,
  });
  assert.deepEqual(bad.address, { mailbox: null, domain: null, suffix: null, root: null });
  assert.deepEqual(bad.mx_records, []);
  assert.equal((await verify('two@@acme.test')).checks.valid_syntax, false);
  assert.equal((await verify('jane@acme')).checks.valid_syntax, false);
  assert.equal((await verify('.jane@acme.test')).checks.valid_syntax, false);

  for (const domain of ['nomx.test', 'nullmx.test', 'gone.test']) {
    const ev = await verify(`jane@${domain}`, 'full');
    assert.equal(ev.result, 'invalid', domain);
    assert.equal(ev.score, 0);
    assert.equal(ev.checks.valid_syntax, true);
    assert.equal(ev.checks.has_mx_records, false);
    assert.equal(ev.checks.smtp_connect, false);
    assert.equal(ev.checks.deliverable, false);
    assert.deepEqual(ev.mx_records, []);
    assert.equal(ev.mailbox_check.outcome, 'no_mx');
  }
  assert.equal(await getCredits(app.running.ctx.db, app.workspace.id), credits - 7 * 5);
});

test('disposable, role, free provider and gibberish', async () => {
  const disposable = await verify('jane@mailinator.com');
  assert.equal(disposable.checks.disposable, true);
  assert.equal(disposable.checks.free_email, true);
  assert.equal(disposable.result, 'disposable');
  assert.equal(disposable.score, 40);
  assert.equal(disposable.risk, 'high');

  const role = await verify('info@acme.test', 'full');
  assert.equal(role.checks.role_account, true);
  assert.equal(role.checks.deliverable, true);
  assert.equal(role.result, 'role');
  assert.equal(role.score, 80);
  assert.equal(role.risk, 'medium');

  const free = await verify('jane.doe@gmail.com', 'full');
  assert.deepEqual(free.checks, { ...PLAIN, free_email: true, domain_age: null, ...MAILBOX_OK });
  assert.equal(free.score, 90);
  assert.equal(free.result, 'safe');

  // Several weaker signals add up: a random-looking mailbox on a free provider.
  const random = await verify('xkqzvbwpt@gmail.com', 'full');
  assert.equal(random.checks.free_email, true);
  assert.equal(random.checks.gibberish, true);
  assert.equal(random.checks.deliverable, true);
  assert.equal(random.score, 65);
  assert.equal(random.result, 'unknown');
  assert.equal(random.risk, 'medium');

  const gibberishOnly = await verify('xkqzvbwpt@acme.test');
  assert.equal(gibberishOnly.checks.gibberish, true);
  assert.equal(gibberishOnly.score, 75);
  assert.equal(gibberishOnly.result, 'safe');
});

test('domain age from RDAP: a domain registered days ago loses points; unknown registrations are null', async () => {
  const fresh = await verify('jane@fresh.test');
  assertAge(fresh.checks.domain_age, 5);
  assert.equal(fresh.score, 80);
  assert.equal(fresh.result, 'safe');
  assert.ok(app.rdap.requests.some((path) => path.endsWith('/domain/fresh.test')));
  assert.equal((await verify('jane@catchall.test')).checks.domain_age, null);
});

test('did_you_mean corrects misspelt big providers only; address parts with a +suffix; trimmed and lowercased', async () => {
  const typo = await verify('jane@gmial.com');
  assert.equal(typo.did_you_mean, 'jane@gmail.com');
  // No MX here; the typo domain is also on the disposable list (typo catchers).
  assert.equal(typo.result, 'invalid');
  assert.equal((await verify('jane@hotmial.com')).did_you_mean, 'jane@hotmail.com');
  assert.equal((await verify('jane@yahooo.com')).did_you_mean, 'jane@yahoo.com');
  assert.equal((await verify('jane.doe@gmail.com')).did_you_mean, null);
  assert.equal((await verify('jane@acme.test')).did_you_mean, null);

  const tagged = await verify('  Jane+News@Acme.TEST ');
  assert.equal(tagged.email, 'jane+news@acme.test');
  assert.deepEqual(tagged.address, { mailbox: 'jane', domain: 'acme.test', suffix: 'news', root: 'jane@acme.test' });
  assert.equal(tagged.result, 'safe');
});

test('DNS that does not answer: status failed, has_mx_records null, nothing guessed', async () => {
  app.dns.hang('hang.test');
  const ev = await verify('jane@hang.test', 'full');
  assert.equal(ev.status, 'failed');
  assert.equal(ev.checks.has_mx_records, null);
  assert.equal(ev.checks.deliverable, null);
  assert.equal(ev.checks.smtp_connect, null);
  assert.equal(ev.mailbox_check.outcome, 'dns_failed');
  assert.equal(ev.result, 'unknown');
  assert.equal(ev.score, 65);
});

test('5 credits charged before the check; 402 with nothing checked, stored or emitted when short', async () => {
  const { workspace, api } = await app.newWorkspace({ credits: 7 });
  await verify('jane@acme.test', 'fast', api);
  assert.equal(await getCredits(app.running.ctx.db, workspace.id), 2);
  app.mx.reset();
  const res = await api.post('/v2/email-verifications', { email: 'jane@acme.test', mode: 'full' });
  assert.equal(res.status, 402);
  assert.deepEqual(res.body, { error: 'Insufficient credits', message: 'This request needs 5 credits but the workspace has 2 available.' });
  assert.equal(app.mx.connections, 0);
  assert.equal(await getCredits(app.running.ctx.db, workspace.id), 2);
  const rows = await app.running.ctx.db.selectFrom('email_verifications').select('id').where('workspace_id', '=', workspace.id).execute();
  assert.equal(rows.length, 1);
  const events = await app.running.ctx.db.selectFrom('events').select('type').where('workspace_id', '=', workspace.id).execute();
  assert.deepEqual(
    events.map((e) => e.type),
    ['email_verification.created'],
  );
});

test('400 for a missing email or a mode other than fast and full; nothing charged', async () => {
  const { workspace, api } = await app.newWorkspace({ credits: 100 });
  for (const body of [{}, { mode: 'full' }, { email: 'jane@acme.test', mode: 'slow' }, { email: 42 }, { email: '' }]) {
    const res = await api.post('/v2/email-verifications', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.statusCode, 400);
    assert.equal(res.body.error, 'Bad Request');
    assert.ok(Array.isArray(res.body.details));
  }
  assert.equal((await app.as(null).post('/v2/email-verifications', { email: 'jane@acme.test' })).status, 401);
  assert.equal(await getCredits(app.running.ctx.db, workspace.id), 100);
});

test('a sending key may not verify (full scope only)', async () => {
  const created = await app.api.post('/v2/api-keys', { name: `sending-${Date.now()}`, scope: 'sending' });
  assert.equal(created.status, 201, created.text);
  const res = await app.as(created.body.key).post('/v2/email-verifications', { email: 'jane@acme.test' });
  assert.equal(res.status, 403);
});

test('email_verification.created carries the verification object as returned', async () => {
  const { workspace, api } = await app.newWorkspace({ credits: 100 });
  const ev = await verify('jane@acme.test', 'full', api);
  const events = await app.running.ctx.db.selectFrom('events').selectAll().where('workspace_id', '=', workspace.id).execute();
  assert.equal(events.length, 1);
  assert.equal(events[0].type, 'email_verification.created');
  const object = JSON.parse(events[0].data);
  assert.deepEqual(checkEventPayload('email_verification.created', object), []);
  assert.deepEqual(object, ev);
  const listed = await api.get('/v2/events?type=email_verification.created&include_data=true');
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.body.data.length, 1);
});
