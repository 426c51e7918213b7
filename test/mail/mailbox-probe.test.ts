// The SMTP mailbox probe against loopback mail servers: shared sessions, a server that ends
// sessions early, MX fallback past a silent host, and the per-MX connection cap.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { startMailboxFarm, startSilentServer, type SilentServer } from '../helpers/mailbox-servers.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { ConnectionLimiter, probeMailboxes, type MailboxProbeOptions } from '../../src/mail/mailbox-probe.ts';

let dns: TestDnsServer;
let farm: Awaited<ReturnType<typeof startMailboxFarm>>;
let silent: SilentServer;
let options: MailboxProbeOptions;

before(async () => {
  dns = await startDnsServer();
  farm = await startMailboxFarm(
    1,
    () => ({
      'probe.test': { mailboxes: { a0: 'exists', a1: 'full', a2: 'disabled', a3: 'exists', a4: 'exists' } },
      'limited.test': {
        mailboxes: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`u${i}`, 'exists' as const])),
        closeAfterRcpts: 4,
      },
      'any.test': { catchAll: true },
    }),
    { firstOctet: 40 },
  );
  silent = await startSilentServer({ host: '127.0.0.41', port: farm.port });
  dns.set('mx.probe.test', 'A', [farm.servers[0].host]);
  dns.set('dead.probe.test', 'A', ['127.0.0.41']);
  options = {
    resolver: createResolver([dns.address], { timeoutMs: 1000 }),
    heloName: 'mail.postlane.test',
    mailFrom: 'verify@mail.postlane.test',
    port: farm.port,
    timeoutMs: 1000,
    allowPrivate: true, // the farm is on loopback
    limiter: new ConnectionLimiter(3),
  };
});
after(async () => {
  await silent.close();
  await farm.close();
  await dns.close();
});

const host = (exchange: string, priority = 10) => ({ exchange, priority });

test('25 addresses of a domain: two sessions, every answer in order, one catch-all RCPT per session', async () => {
  const server = farm.servers[0];
  server.reset();
  const addresses = ['a0', 'a1', 'a2', 'a3', 'a4', ...Array.from({ length: 20 }, (_, i) => `other${i}`)].map(
    (local) => `${local}@probe.test`,
  );
  const results = await probeMailboxes(addresses, 'probe.test', [host('mx.probe.test')], options);
  assert.equal(results.length, 25);
  const expected = (address: string) =>
    ({
      'a0@probe.test': 'accepted',
      'a1@probe.test': 'inbox_full',
      'a2@probe.test': 'disabled',
      'a3@probe.test': 'accepted',
      'a4@probe.test': 'accepted',
    })[address] ?? 'rejected';
  results.forEach((r, i) => {
    assert.equal(r.outcome, expected(addresses[i]), addresses[i]);
    assert.equal(r.connected, true);
    assert.equal(r.mxHost, 'mx.probe.test');
    assert.equal(r.catchAll, false, addresses[i]);
  });
  assert.equal(server.connections, 2);
  const random = server.rcpts.filter((rcpt) => !addresses.includes(rcpt));
  assert.equal(random.length, 1, 'the second session had no accepted address, so no catch-all RCPT');
  assert.equal(server.dataCommands, 0);
});

test('a catch-all domain: accepted addresses are catch_all', async () => {
  const results = await probeMailboxes(['x@any.test', 'y@any.test'], 'any.test', [host('mx.probe.test')], options);
  assert.deepEqual(
    results.map((r) => [r.outcome, r.catchAll]),
    [
      ['accepted', true],
      ['accepted', true],
    ],
  );
});

test('a server that ends sessions after 4 recipients (421): new sessions for the rest, nothing lost', async () => {
  const server = farm.servers[0];
  server.reset();
  const addresses = Array.from({ length: 10 }, (_, i) => `u${i}@limited.test`);
  const results = await probeMailboxes(addresses, 'limited.test', [host('mx.probe.test')], options);
  assert.deepEqual(
    results.map((r) => r.outcome),
    Array(10).fill('accepted'),
  );
  assert.ok(server.connections >= 3, `${server.connections} sessions`);
});

test('MX fallback: a host that never greets is passed over for the next; a domain with only that host times out', async () => {
  const results = await probeMailboxes(['a0@probe.test'], 'probe.test', [host('dead.probe.test', 5), host('mx.probe.test', 10)], options);
  assert.equal(results[0].outcome, 'accepted');
  assert.equal(results[0].mxHost, 'mx.probe.test');
  const dead = await probeMailboxes(['a0@probe.test', 'a3@probe.test'], 'probe.test', [host('dead.probe.test')], options);
  for (const r of dead) {
    assert.equal(r.outcome, 'timeout');
    assert.equal(r.connected, false);
    assert.equal(r.mxHost, 'dead.probe.test');
  }
  const unknown = await probeMailboxes(['a0@probe.test'], 'probe.test', [host('nowhere.probe.test')], options);
  assert.equal(unknown[0].outcome, 'connection_failed');
});

test('the limiter caps connections to one MX address however many probes run', async () => {
  const server = farm.servers[0];
  server.reset();
  server.rcptDelayMs = 30;
  try {
    const limited = { ...options, limiter: new ConnectionLimiter(2) };
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => probeMailboxes([`p${i}@any.test`], 'any.test', [host('mx.probe.test')], limited)),
    );
    assert.ok(results.every(([r]) => r.outcome === 'accepted'));
    assert.equal(server.connections, 8);
    assert.ok(server.maxOpenConnections <= 2, `${server.maxOpenConnections} at once`);
  } finally {
    server.rcptDelayMs = 0;
  }
});
