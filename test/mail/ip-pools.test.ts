// IP pools in the delivery client (docs/delivery.md, "IP pools"): DELIVERY_IP_POOLS parsing, a
// pool's addresses sharing the load, each with its EHLO name as the receiver sees them, and
// traffic shaping per source address and destination.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseIpPools, SourcePicker } from '../../src/mail/ip-pools.ts';
import { SmtpDelivery } from '../../src/mail/smtp-delivery.ts';
import { TrafficShaper } from '../../src/mail/shaping.ts';
import { loadConfig, ConfigError } from '../../src/config.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { startDnsServer } from '../helpers/dns-server.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

test('DELIVERY_IP_POOLS: pools by name, HELO names, a default; mistakes are refused at start', () => {
  const pools = parseIpPools(
    JSON.stringify({
      Bulk: { addresses: [{ address: '203.0.113.20', helo: 'MTA2.example.com' }, '203.0.113.21'] },
      tx: { default: true, addresses: ['2001:db8::10'] },
    }),
    'mail.example.com',
  );
  assert.deepEqual(pools, {
    pools: [
      {
        name: 'bulk',
        addresses: [
          { address: '203.0.113.20', helo: 'mta2.example.com' },
          { address: '203.0.113.21', helo: 'mail.example.com' },
        ],
      },
      { name: 'tx', addresses: [{ address: '2001:db8::10', helo: 'mail.example.com' }] },
    ],
    defaultPool: 'tx',
  });
  assert.deepEqual(parseIpPools('', 'x'), { pools: [], defaultPool: null });
  assert.deepEqual(loadConfig({}).ipPools, { pools: [], defaultPool: null }, 'no pools by default');

  const refused: Array<[unknown, RegExp]> = [
    ['[1]', /must be a JSON object/],
    [{ a: { addresses: [] } }, /a\.addresses must be a non-empty list/],
    [{ a: { addresses: ['mail.example.com'] } }, /a\.addresses\[0\]\.address must be an IP address/],
    [{ a: { addresses: [{ address: '127.0.0.2', helo: 'not a name' }] } }, /helo must be a host name/],
    [{ a: { addresses: ['127.0.0.2'] }, b: { addresses: ['127.0.0.2'] } }, /127\.0\.0\.2 is in both a and b/],
    [{ a: { default: true, addresses: ['127.0.0.2'] }, b: { default: true, addresses: ['127.0.0.3'] } }, /both a and b as default/],
    [{ a: { adresses: ['127.0.0.2'] } }, /unknown field "adresses"/],
    [{ 'a b': { addresses: ['127.0.0.2'] } }, /pool name "a b"/],
  ];
  for (const [value, message] of refused) {
    assert.throws(() => parseIpPools(typeof value === 'string' ? value : JSON.stringify(value), 'x'), message);
  }
  assert.throws(
    () => loadConfig({ DELIVERY_IP_POOLS: '{nope' }),
    (error) => error instanceof ConfigError && /DELIVERY_IP_POOLS must be JSON/.test(error.message),
  );
});

test('a pool hands out its least used address, in turn on ties, of the family asked for', () => {
  const picker = new SourcePicker(parseIpPools(JSON.stringify({ p: { addresses: ['127.0.0.2', '127.0.0.3', '::1'] } }), 'h'));
  const first = picker.acquire('p', 4)!;
  const second = picker.acquire('p', 4)!;
  assert.deepEqual([first.address, second.address], ['127.0.0.2', '127.0.0.3']);
  second.release();
  assert.equal(picker.acquire('p', 4)!.address, '127.0.0.3', 'the idle one, not the busy one');
  assert.equal(picker.acquire('p', 6)!.address, '::1');
  assert.equal(picker.acquire('other', 4), null, 'an unknown pool: the OS chooses');
  assert.equal(picker.has('p'), true);
});

test("deliveries through a pool leave from each of its addresses with that address's EHLO name; shaping per source", async (t) => {
  const dns = await startDnsServer();
  const sink = await startSmtpSink({ rules: [] });
  const resolver = createResolver([dns.address], { timeoutMs: 300, tries: 1 });
  dns.set('rcpt.test', 'MX', [{ exchange: 'mx.rcpt.test', priority: 10 }]);
  dns.set('mx.rcpt.test', 'A', [sink.host]);
  dns.set('v6only.test', 'MX', [{ exchange: 'mx6.rcpt.test', priority: 10 }]);
  dns.set('mx6.rcpt.test', 'AAAA', ['::1']);
  const shaper = new TrafficShaper();
  const ipPools = parseIpPools(
    JSON.stringify({
      bulk: {
        addresses: [
          { address: '127.0.0.2', helo: 'b1.mta.test' },
          { address: '127.0.0.3', helo: 'b2.mta.test' },
        ],
      },
    }),
    'mta.postlane.test',
  );
  const delivery = new SmtpDelivery({
    resolver,
    heloName: 'mta.postlane.test',
    mxPort: sink.port,
    shaper,
    ipPools,
    connectionTimeoutMs: 5000,
    greetingTimeoutMs: 5000,
    socketTimeoutMs: 5000,
  });
  t.after(async () => {
    await delivery.close();
    shaper.close();
    await sink.close();
    await dns.close();
  });
  const raw = Buffer.from('From: a@acme.test\r\nTo: b@rcpt.test\r\nSubject: Hi\r\n\r\nHi\r\n');

  const outcomes = await Promise.all(
    [1, 2, 3, 4].map((n) => delivery.deliver({ from: 'a@acme.test', to: `r${n}@rcpt.test`, raw, pool: 'bulk' })),
  );
  assert.deepEqual(
    outcomes.map((o) => o.kind),
    ['delivered', 'delivered', 'delivered', 'delivered'],
  );
  const seen = sink.messages.map((m) => `${m.remoteAddress} ${m.heloName}`).sort();
  assert.deepEqual(seen, ['127.0.0.2 b1.mta.test', '127.0.0.2 b1.mta.test', '127.0.0.3 b2.mta.test', '127.0.0.3 b2.mta.test']);
  assert.deepEqual(
    outcomes.map((o) => o.source).sort(),
    ['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3'],
    'each outcome names its source',
  );

  // Without a pool: the OS chooses the source, the EHLO name is MAIL_HOSTNAME.
  const plain = await delivery.deliver({ from: 'a@acme.test', to: 'plain@rcpt.test', raw });
  assert.equal(plain.kind, 'delivered');
  assert.equal(plain.source, undefined);
  const last = sink.messages.at(-1)!;
  assert.deepEqual([last.remoteAddress, last.heloName], ['127.0.0.1', 'mta.postlane.test']);

  assert.deepEqual(
    shaper.states().map((s) => [s.destination, s.source, s.accepted]),
    [
      ['mx.rcpt.test', null, 1],
      ['mx.rcpt.test', '127.0.0.2', 2],
      ['mx.rcpt.test', '127.0.0.3', 2],
    ],
  );

  // An IPv4 pool cannot reach an MX with IPv6 addresses only: a temporary failure that says so.
  const v6 = await delivery.deliver({ from: 'a@acme.test', to: 'x@v6only.test', raw, pool: 'bulk' });
  assert.equal(v6.kind, 'temporary');
  assert.match(v6.response, /IP pool bulk has no source address of the family/);
});
