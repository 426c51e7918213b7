// The `full` mailbox check never connects to an MX address that is not public (loopback,
// private, link-local, unspecified, multicast…) unless ALLOW_PRIVATE_URLS: here it is off, the
// loopback DNS server points MX records at such addresses, and mail servers listen on loopback
// to see whether anyone knocks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startVerificationApp, type VerificationApp } from './helpers.ts';
import { startMailboxServer, type MailboxServer } from '../helpers/mailbox-servers.ts';
import { eventually } from '../helpers/app.ts';

let app: VerificationApp;
let sink: MailboxServer;
before(async () => {
  app = await startVerificationApp({ env: { ALLOW_PRIVATE_URLS: 'false' } });
  // A mail server on 127.0.0.1 at MX_PORT, accepting anything: the sink a check must not reach.
  sink = await startMailboxServer({ host: '127.0.0.1', port: app.mx.port, domains: { 'loopback.test': { catchAll: true } } });
  app.dns.set('loopback.test', 'MX', [{ exchange: 'mx.loopback.test', priority: 10 }]);
  app.dns.set('mx.loopback.test', 'A', ['127.0.0.1']);
});
after(async () => {
  await sink?.close();
  await app?.close();
});

async function verifyFull(email: string) {
  const res = await app.api.post('/v2/email-verifications', { email, mode: 'full' });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

test('an MX that resolves to 127.0.0.1 is not connected to: the mailbox check is not_checked, nothing about the mailbox guessed', async () => {
  sink.reset();
  const ev = await verifyFull('jane@loopback.test');
  assert.equal(sink.connections, 0, 'the loopback mail server saw no connection');
  assert.equal(ev.status, 'completed');
  assert.deepEqual(ev.mx_records, [{ priority: 10, exchange: 'mx.loopback.test' }]);
  assert.deepEqual(ev.mailbox_check, {
    outcome: 'not_checked',
    mx_host: 'mx.loopback.test',
    code: null,
    enhanced_code: null,
    message: 'mx.loopback.test resolves to 127.0.0.1, not a public address: not connected to',
  });
  assert.equal(ev.checks.has_mx_records, true);
  for (const check of ['smtp_connect', 'deliverable', 'inbox_full', 'disabled', 'catch_all']) assert.equal(ev.checks[check], null, check);
  assert.equal(ev.result, 'unknown');
});

test('loopback, private, link-local, unspecified and multicast MX addresses, IPv4 and IPv6, are never asked', async () => {
  const cases: Array<[string, 'A' | 'AAAA', string]> = [
    ['lo2.test', 'A', '127.0.0.2'], // the helpers' own mail server, which would answer
    ['zero.test', 'A', '0.0.0.0'],
    ['ten.test', 'A', '10.0.0.25'],
    ['corp.test', 'A', '172.16.5.5'],
    ['home.test', 'A', '192.168.1.10'],
    ['metadata.test', 'A', '169.254.169.254'],
    ['multicast.test', 'A', '224.0.0.1'],
    ['v6loop.test', 'AAAA', '::1'],
    ['v6link.test', 'AAAA', 'fe80::1'],
    ['v6ula.test', 'AAAA', 'fd00::25'],
    ['v6mapped.test', 'AAAA', '::ffff:127.0.0.1'],
  ];
  for (const [domain, type, address] of cases) {
    app.dns.set(domain, 'MX', [{ exchange: `mx.${domain}`, priority: 10 }]);
    app.dns.set(`mx.${domain}`, type, [address]);
  }
  app.mx.reset();
  sink.reset();
  const started = Date.now();
  for (const [domain, , address] of cases) {
    const ev = await verifyFull(`jane@${domain}`);
    assert.equal(ev.mailbox_check.outcome, 'not_checked', `${domain}: ${JSON.stringify(ev.mailbox_check)}`);
    assert.equal(ev.mailbox_check.message, `mx.${domain} resolves to ${address}, not a public address: not connected to`);
    assert.equal(ev.checks.smtp_connect, null, domain);
  }
  assert.equal(app.mx.connections + app.silent.connections + sink.connections, 0, 'no loopback mail server saw a connection');
  assert.ok(Date.now() - started < 5000, 'no connection was even tried (each would have waited for its timeout)');
});

test('a list is held to the same rule', async () => {
  sink.reset();
  app.mx.reset();
  const created = await app.api.post('/v2/email-verification-lists', { name: 'private mx', emails: ['a@loopback.test', 'jane@acme.test'] });
  assert.equal(created.status, 201, created.text);
  await eventually(
    async () => (await app.api.get(`/v2/email-verification-lists/${created.body.id}`)).body.status === 'completed',
    60_000,
    100,
  );
  const results = (await app.api.get(`/v2/email-verification-lists/${created.body.id}/results`)).body.data;
  assert.deepEqual(results.map((r: any) => [r.email, r.mailbox_check?.outcome]).sort(), [
    ['a@loopback.test', 'not_checked'],
    ['jane@acme.test', 'not_checked'],
  ]);
  assert.equal(sink.connections + app.mx.connections, 0, 'neither loopback mail server was asked');
});
