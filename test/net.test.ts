// src/platform/net.ts: address classification, resolution through DNS_SERVERS, and HTTP
// pinned to the checked address (no redirects, time and size limits).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { createResolver } from '../src/platform/dns.ts';
import { FetchError, fetchPinned, isPrivateAddress, parseHttpUrl, resolvePublicAddress, UrlRefusedError } from '../src/platform/net.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.ts';
import { createSelfSignedCertificate } from '../src/smtp/tls.ts';

let dns: TestDnsServer;
let receiver: WebhookReceiver;

before(async () => {
  dns = await startDnsServer();
  receiver = await startWebhookReceiver();
});
after(async () => {
  await receiver.close();
  await dns.close();
});

test('isPrivateAddress: loopback, private, link-local, shared, multicast and reserved ranges', () => {
  const privateOnes = [
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '0.1.2.3',
    '192.0.2.10',
    '198.51.100.1',
    '203.0.113.9',
    '198.18.0.1',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '192.0.0.8',
    '::',
    '::1',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    'fec0::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:c0a8:0101::1',
    '100::1',
    'not-an-ip',
    '',
  ];
  for (const ip of privateOnes) assert.equal(isPrivateAddress(ip), true, ip);
  const publicOnes = [
    '8.8.8.8',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '[2606:4700::1]',
  ];
  for (const ip of publicOnes) assert.equal(isPrivateAddress(ip), false, ip);
});

test('parseHttpUrl accepts http and https only', () => {
  assert.equal(parseHttpUrl(' https://example.com/hook ').hostname, 'example.com');
  for (const bad of ['ftp://example.com/', 'not a url', 'file:///etc/passwd', 'javascript:alert(1)']) {
    assert.throws(
      () => parseHttpUrl(bad),
      (e: unknown) => e instanceof UrlRefusedError && e.reason === 'invalid',
      bad,
    );
  }
});

test('resolvePublicAddress resolves through the configured DNS server and refuses non-public answers', async () => {
  const resolver = createResolver([dns.address], { timeoutMs: 300, tries: 1 });
  dns.set('public.example', 'A', ['93.184.216.34']);
  dns.set('v6only.example', 'AAAA', ['2606:4700::1111']);
  dns.set('internal.example', 'A', ['10.0.0.5']);
  dns.set('mixed.example', 'A', ['93.184.216.34', '127.0.0.1']);
  dns.set('ula.example', 'AAAA', ['fd00::1']);
  dns.set('metadata.example', 'A', ['169.254.169.254']);
  dns.hang('slow.example');

  assert.deepEqual(await resolvePublicAddress(resolver, 'public.example', false), { address: '93.184.216.34', family: 4 });
  assert.deepEqual(await resolvePublicAddress(resolver, 'v6only.example', false), { address: '2606:4700::1111', family: 6 });
  for (const name of [
    'internal.example',
    'mixed.example',
    'ula.example',
    'metadata.example',
    'localhost',
    'api.localhost',
    '127.0.0.1',
    '[::1]',
    '10.9.8.7',
  ]) {
    await assert.rejects(
      resolvePublicAddress(resolver, name, false),
      (e: unknown) => e instanceof UrlRefusedError && e.reason === 'private',
      name,
    );
  }
  for (const name of ['nowhere.example', 'slow.example']) {
    await assert.rejects(
      resolvePublicAddress(resolver, name, false),
      (e: unknown) => e instanceof UrlRefusedError && e.reason === 'unresolvable',
      name,
    );
  }
  // ALLOW_PRIVATE_URLS: private answers are fine, localhost needs no DNS.
  assert.deepEqual(await resolvePublicAddress(resolver, 'internal.example', true), { address: '10.0.0.5', family: 4 });
  assert.deepEqual(await resolvePublicAddress(resolver, 'localhost', true), { address: '127.0.0.1', family: 4 });
  assert.deepEqual(await resolvePublicAddress(resolver, '[::1]', true), { address: '::1', family: 6 });
  assert.ok(
    dns.queries.some((q) => q.name === 'public.example'),
    'the lookups went to the configured server',
  );
});

test('fetchPinned connects to the checked address with the URL name as Host (no second lookup)', async () => {
  receiver.reset();
  // The name resolves nowhere (and would resolve elsewhere): the pinned address is used.
  dns.set('rebind.example', 'A', ['93.184.216.34']);
  const queriesBefore = dns.queries.length;
  const response = await fetchPinned(
    `http://rebind.example:${receiver.port}/hook?x=1`,
    { address: '127.0.0.1', family: 4 },
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[1]',
    },
  );
  assert.equal(response.status, 200);
  assert.equal(response.body.toString(), 'ok');
  assert.equal(dns.queries.length, queriesBefore, 'no DNS query at connect time');
  const [received] = receiver.requests;
  assert.equal(received.headers.host, `rebind.example:${receiver.port}`);
  assert.equal(received.path, '/hook?x=1');
  assert.equal(received.body, '[1]');
  assert.equal(received.headers['content-length'], '3');
});

test('fetchPinned sends URL credentials as basic auth', async () => {
  receiver.reset();
  await fetchPinned(
    `http://us%40er:p%3Ass@127.0.0.1:${receiver.port}/`,
    { address: '127.0.0.1', family: 4 },
    { method: 'POST', body: 'x' },
  );
  assert.equal(receiver.requests[0].headers.authorization, `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
});

test('fetchPinned returns redirects without following them', async () => {
  receiver.reset();
  receiver.queue({ status: 302, headers: { location: `http://127.0.0.1:${receiver.port}/elsewhere` } });
  const response = await fetchPinned(`http://127.0.0.1:${receiver.port}/start`, { address: '127.0.0.1', family: 4 });
  assert.equal(response.status, 302);
  assert.equal(response.headers.location, `http://127.0.0.1:${receiver.port}/elsewhere`);
  assert.equal(receiver.requests.length, 1, 'the redirect target was not requested');
});

test('fetchPinned gives up after the timeout', async () => {
  receiver.reset();
  receiver.queue({ status: 200, delayMs: 2000 });
  await assert.rejects(
    fetchPinned(`http://127.0.0.1:${receiver.port}/slow`, { address: '127.0.0.1', family: 4 }, { timeoutMs: 200 }),
    (e: unknown) => e instanceof FetchError && e.kind === 'timeout',
  );
});

test('fetchPinned refuses or truncates bodies over maxBytes', async () => {
  receiver.reset();
  receiver.setDefault({ status: 200, body: 'x'.repeat(5000) });
  await assert.rejects(
    fetchPinned(`http://127.0.0.1:${receiver.port}/big`, { address: '127.0.0.1', family: 4 }, { maxBytes: 1000 }),
    (e: unknown) => e instanceof FetchError && e.kind === 'too_large',
  );
  const cut = await fetchPinned(
    `http://127.0.0.1:${receiver.port}/big`,
    { address: '127.0.0.1', family: 4 },
    { maxBytes: 1000, truncate: true },
  );
  assert.equal(cut.body.length, 1000);
  assert.equal(cut.truncated, true);
  receiver.reset();
});

test('fetchPinned reports refused connections', async () => {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await assert.rejects(
    fetchPinned(`http://127.0.0.1:${port}/`, { address: '127.0.0.1', family: 4 }),
    (e: unknown) => e instanceof FetchError && e.kind === 'connection' && e.message === 'Connection refused',
  );
});

test('fetchPinned retries once, on a fresh connection, when a kept-alive socket turns out dead', async () => {
  // A server that drops a connection, without answering, when a second request arrives on it.
  const served = new WeakMap<object, number>();
  let connections = 0;
  const server = createServer((request, response) => {
    const count = (served.get(request.socket) ?? 0) + 1;
    served.set(request.socket, count);
    if (count > 1) return request.socket.destroy();
    request.resume();
    request.on('end', () => response.end('ok'));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    for (let i = 0; i < 3; i++) {
      const response = await fetchPinned(`http://127.0.0.1:${port}/`, { address: '127.0.0.1', family: 4 }, { method: 'POST', body: 'x' });
      assert.equal(response.status, 200);
    }
    assert.ok(connections >= 3, 'each retry used a new connection');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('fetchPinned over https sends the URL name as SNI and refuses a certificate no CA vouches for', async () => {
  const { key, cert } = createSelfSignedCertificate(['secure.example']);
  const names: string[] = [];
  const context = createSecureContext({ key, cert });
  const server = createTlsServer(
    { key, cert, SNICallback: (name, done) => (names.push(name), done(null, context)) },
    (_request, response) => response.end('ok'),
  );
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    await assert.rejects(
      fetchPinned(`https://secure.example:${port}/hook`, { address: '127.0.0.1', family: 4 }, { method: 'POST', body: 'x' }),
      (e: unknown) => e instanceof FetchError && e.kind === 'tls',
    );
    assert.deepEqual(names, ['secure.example']);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
