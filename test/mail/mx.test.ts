import { test } from 'node:test';
import assert from 'node:assert/strict';
import { orderMxHosts, resolveAddresses, resolveMx } from '../../src/mail/mx.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { startDnsServer } from '../helpers/dns-server.ts';

test('MX hosts are ordered by priority, equal priorities shuffled, duplicates and trailing dots dropped', () => {
  const records = [
    { exchange: 'mx-c.example.com.', priority: 10 },
    { exchange: 'backup.example.com', priority: 50 },
    { exchange: 'MX-A.example.com', priority: 10 },
    { exchange: 'mx-b.example.com', priority: 20 },
    { exchange: 'mx-b.example.com', priority: 5 },
  ];
  // The random source decides ties only: a rising sequence keeps the given order, a falling one reverses it.
  let n = 0;
  const rising = () => n++ / 10;
  assert.deepEqual(orderMxHosts(records, rising), [
    { exchange: 'mx-b.example.com', priority: 5 },
    { exchange: 'mx-c.example.com', priority: 10 },
    { exchange: 'mx-a.example.com', priority: 10 },
    { exchange: 'backup.example.com', priority: 50 },
  ]);
  let m = 10;
  const falling = () => m-- / 10;
  assert.deepEqual(
    orderMxHosts(records, falling).map((h) => h.exchange),
    ['mx-b.example.com', 'mx-a.example.com', 'mx-c.example.com', 'backup.example.com'],
  );
  // With Math.random both orders of the tie show up.
  const seen = new Set<string>();
  for (let i = 0; i < 200 && seen.size < 2; i++) seen.add(orderMxHosts(records)[1].exchange);
  assert.deepEqual([...seen].sort(), ['mx-a.example.com', 'mx-c.example.com']);
});

test('resolveMx over DNS: MX, implicit MX, null MX, NXDOMAIN, no records, timeout', async (t) => {
  const dns = await startDnsServer();
  t.after(() => dns.close());
  const resolver = createResolver([dns.address], { timeoutMs: 300, tries: 1 });

  dns.set('mail.test', 'MX', [
    { exchange: 'mx2.mail.test', priority: 20 },
    { exchange: 'mx1.mail.test', priority: 10 },
  ]);
  assert.deepEqual(await resolveMx('Mail.Test', resolver), {
    kind: 'hosts',
    implicit: false,
    hosts: [
      { exchange: 'mx1.mail.test', priority: 10 },
      { exchange: 'mx2.mail.test', priority: 20 },
    ],
  });

  dns.set('bare.test', 'A', ['127.0.0.1']);
  assert.deepEqual(await resolveMx('bare.test', resolver), {
    kind: 'hosts',
    implicit: true,
    hosts: [{ exchange: 'bare.test', priority: 0 }],
  });

  dns.set('v6only.test', 'AAAA', ['::1']);
  assert.deepEqual(await resolveMx('v6only.test', resolver), {
    kind: 'hosts',
    implicit: true,
    hosts: [{ exchange: 'v6only.test', priority: 0 }],
  });

  dns.set('nullmx.test', 'MX', [{ exchange: '.', priority: 0 }]);
  dns.set('nullmx.test', 'A', ['127.0.0.1']);
  assert.deepEqual(await resolveMx('nullmx.test', resolver), {
    kind: 'permanent',
    enhancedCode: '5.1.10',
    reason: 'Domain nullmx.test does not accept mail (null MX)',
  });
  // A null MX mixed with real ones (forbidden by RFC 7505): the real ones are used.
  dns.set('mixed.test', 'MX', [
    { exchange: '.', priority: 0 },
    { exchange: 'mx.mixed.test', priority: 10 },
  ]);
  assert.deepEqual(await resolveMx('mixed.test', resolver), {
    kind: 'hosts',
    implicit: false,
    hosts: [{ exchange: 'mx.mixed.test', priority: 10 }],
  });

  const nx = await resolveMx('nowhere.test', resolver);
  assert.deepEqual(nx, { kind: 'permanent', enhancedCode: '5.1.2', reason: 'Domain nowhere.test does not exist (NXDOMAIN)' });

  dns.set('txtonly.test', 'TXT', ['v=spf1 -all']);
  assert.deepEqual(await resolveMx('txtonly.test', resolver), {
    kind: 'permanent',
    enhancedCode: '5.1.2',
    reason: 'Domain txtonly.test has no MX, A or AAAA record',
  });

  dns.hang('slow.test');
  assert.deepEqual(await resolveMx('slow.test', resolver), {
    kind: 'temporary',
    enhancedCode: '4.4.3',
    reason: 'DNS MX lookup for slow.test failed: ETIMEOUT',
  });
});

test('resolveAddresses lists IPv4 before IPv6 and tells missing hosts from DNS failures', async (t) => {
  const dns = await startDnsServer();
  t.after(() => dns.close());
  const resolver = createResolver([dns.address], { timeoutMs: 300, tries: 1 });
  dns.set('mx.test', 'AAAA', ['::1']);
  dns.set('mx.test', 'A', ['127.0.0.5', '127.0.0.6']);
  assert.deepEqual(await resolveAddresses('mx.test.', resolver), { kind: 'addresses', addresses: ['127.0.0.5', '127.0.0.6', '::1'] });
  assert.deepEqual(await resolveAddresses('192.0.2.1', resolver), { kind: 'addresses', addresses: ['192.0.2.1'] });
  assert.equal((await resolveAddresses('missing.test', resolver)).kind, 'none');
  dns.hang('hung.test');
  assert.equal((await resolveAddresses('hung.test', resolver)).kind, 'temporary');
});
