import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { simpleParser } from 'mailparser';
import { composeMessage } from '../../src/mail/compose.ts';
import { dkimRecordValue, generateDkimKeyPair, signMessage } from '../../src/mail/dkim.ts';
import { classifySmtpError, parseSmarthostUrl, SmtpDelivery, createSmtpDelivery } from '../../src/mail/smtp-delivery.ts';
import { deriveVerpSecret, parseVerpAddress, returnPathDomain, verpAddress } from '../../src/mail/verp.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { startDnsServer } from '../helpers/dns-server.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

async function setup(t: import('node:test').TestContext, sinkOptions: Parameters<typeof startSmtpSink>[0] = {}) {
  const dns = await startDnsServer();
  const sink = await startSmtpSink(sinkOptions);
  const resolver = createResolver([dns.address], { timeoutMs: 300, tries: 1 });
  // rcpt.test → mx.rcpt.test → the sink's address; the sink's port stands in for MX_PORT 25.
  dns.set('rcpt.test', 'MX', [{ exchange: 'mx.rcpt.test', priority: 10 }]);
  dns.set('mx.rcpt.test', 'A', [sink.host]);
  const delivery = new SmtpDelivery({
    resolver,
    heloName: 'mta.postlane.test',
    mxPort: sink.port,
    connectionTimeoutMs: 5000,
    greetingTimeoutMs: 5000,
    socketTimeoutMs: 5000,
  });
  t.after(async () => {
    await delivery.close();
    await sink.close();
    await dns.close();
  });
  return { dns, sink, resolver, delivery };
}

const message = (id = 'm1') =>
  composeMessage({
    from: 'Acme <news@acme.test>',
    to: ['bob@rcpt.test'],
    subject: 'Hello',
    text: 'Hi Bob',
    html: '<p>Hi Bob</p>',
    messageId: `${id}@acme.test`,
  });

test('a signed message reaches the MX over STARTTLS unchanged, with a VERP sender and a DKIM signature that verifies', async (t) => {
  const { dns, sink, resolver, delivery } = await setup(t);
  const keys = generateDkimKeyPair();
  dns.set('postlane._domainkey.acme.test', 'TXT', [dkimRecordValue(keys.publicKey)]);
  const secret = deriveVerpSecret(Buffer.alloc(32, 1));
  const sender = verpAddress('em_2gG6QwWJ0hR1x1wJbYq8sVZ3nQp', returnPathDomain('acme.test', 'postlane'), secret);

  // One email per recipient: the bcc copy carries the same headers (no Bcc) and its own envelope.
  const raw = await composeMessage({
    from: 'Acme <news@acme.test>',
    to: ['bob@rcpt.test'],
    subject: 'Hello',
    text: 'Hi',
    messageId: 'abc@acme.test',
  });
  const signed = await signMessage(raw, { domain: 'acme.test', selector: 'postlane', privateKey: keys.privateKey });
  const outcome = await delivery.deliver({ from: sender, to: 'hidden@rcpt.test', raw: signed });

  assert.equal(outcome.kind, 'delivered');
  assert.equal(outcome.code, 250);
  assert.equal(outcome.enhancedCode, '2.0.0');
  assert.match(outcome.response, /^250 2\.0\.0 Ok: queued as /);
  assert.equal(outcome.mxHost, 'mx.rcpt.test');
  assert.equal(outcome.address, '127.0.0.1');
  assert.equal(outcome.attempts.length, 1);

  const [received] = sink.messages;
  assert.equal(received.secure, true, 'STARTTLS was used (self-signed certificate accepted)');
  assert.equal(received.heloName, 'mta.postlane.test');
  assert.equal(received.mailFrom, sender);
  assert.deepEqual(received.rcptTo, ['hidden@rcpt.test']);
  assert.ok(received.raw.equals(signed), 'the bytes received are the bytes signed');
  assert.equal(parseVerpAddress(received.mailFrom, secret)?.id, 'em_2gG6QwWJ0hR1x1wJbYq8sVZ3nQp');
  const parsed = await simpleParser(received.raw);
  assert.equal(parsed.messageId, '<abc@acme.test>');
  assert.equal(parsed.headers.has('bcc'), false);
  const verified = await dkimVerify(received.raw, {
    strict: true,
    resolver: (name, type) => resolver.resolve(name, type) as Promise<string[][]>,
  });
  assert.equal(verified.results[0].status.result, 'pass');
  assert.equal(verified.results[0].signingDomain, 'acme.test');
});

test('envelope addresses: plain ones go out as given, others normalized as before (an upper-case domain is lower-cased)', async (t) => {
  const { sink, delivery } = await setup(t);
  const raw = await message();
  for (const to of ['plain.bob+tag@rcpt.test', 'Mixed.Case@RCPT.test']) {
    const outcome = await delivery.deliver({ from: to === 'plain.bob+tag@rcpt.test' ? '' : 'bounces@acme.test', to, raw });
    assert.equal(outcome.kind, 'delivered', `${to}: ${outcome.response}`);
  }
  assert.deepEqual(
    sink.messages.map((m) => [m.mailFrom, m.rcptTo]),
    [
      ['', ['plain.bob+tag@rcpt.test']],
      ['bounces@acme.test', ['Mixed.Case@rcpt.test']],
    ],
  );
  assert.ok(sink.messages.every((m) => m.raw.equals(raw)));
});

test('550 → permanent, 451 → temporary and then delivered, 5xx after DATA → permanent', async (t) => {
  const { sink, delivery } = await setup(t);
  const raw = await message();
  const bounced = await delivery.deliver({ from: 'b@acme.test', to: 'bounce@rcpt.test', raw });
  assert.deepEqual(
    { kind: bounced.kind, code: bounced.code, enhancedCode: bounced.enhancedCode, response: bounced.response, mxHost: bounced.mxHost },
    {
      kind: 'permanent',
      code: 550,
      enhancedCode: '5.1.1',
      response: '550 5.1.1 <bounce>: Recipient address rejected: User unknown',
      mxHost: 'mx.rcpt.test',
    },
  );

  sink.addRule({ match: 'greylisted@rcpt.test', reply: { code: 451, message: '4.7.1 Try again later' }, times: 1 });
  const first = await delivery.deliver({ from: 'b@acme.test', to: 'greylisted@rcpt.test', raw });
  assert.deepEqual([first.kind, first.code, first.enhancedCode, first.response], ['temporary', 451, '4.7.1', '451 4.7.1 Try again later']);
  const retried = await delivery.deliver({ from: 'b@acme.test', to: 'greylisted@rcpt.test', raw });
  assert.equal(retried.kind, 'delivered');

  const later = await delivery.deliver({ from: 'b@acme.test', to: 'later@rcpt.test', raw });
  assert.deepEqual([later.kind, later.code], ['temporary', 451]);

  sink.addRule({ match: 'spam@rcpt.test', stage: 'data', reply: { code: 554, message: '5.7.1 Message rejected as spam' } });
  const rejected = await delivery.deliver({ from: 'b@acme.test', to: 'spam@rcpt.test', raw });
  assert.deepEqual([rejected.kind, rejected.code, rejected.enhancedCode], ['permanent', 554, '5.7.1']);

  assert.deepEqual(
    sink.messages.map((m) => m.rcptTo[0]),
    ['greylisted@rcpt.test'],
  );

  // The null sender (for messages that must never bounce back) goes out as MAIL FROM:<>.
  assert.equal((await delivery.deliver({ from: '', to: 'notify@rcpt.test', raw })).kind, 'delivered');
  assert.equal(sink.messages[1].mailFrom, '');
});

test('MX hosts are tried in preference order: refused, unresolvable and 4xx hosts give way to the next', async (t) => {
  const { dns, sink, delivery } = await setup(t);
  const raw = await message();
  // 127.0.0.2 has nothing listening on the sink's port: connection refused.
  dns.set('multi.test', 'MX', [
    { exchange: 'mx3.multi.test', priority: 30 },
    { exchange: 'dead.multi.test', priority: 10 },
    { exchange: 'noaddress.multi.test', priority: 15 },
  ]);
  dns.set('dead.multi.test', 'A', ['127.0.0.2']);
  dns.set('mx3.multi.test', 'A', ['127.0.0.1']);
  const outcome = await delivery.deliver({ from: 'b@acme.test', to: 'user@multi.test', raw });
  assert.equal(outcome.kind, 'delivered');
  assert.equal(outcome.mxHost, 'mx3.multi.test');
  assert.deepEqual(
    outcome.attempts.map((a) => [a.mxHost, a.kind, a.code, a.enhancedCode]),
    [
      ['dead.multi.test', 'temporary', null, '4.4.1'],
      ['noaddress.multi.test', 'temporary', null, '4.4.4'],
      ['mx3.multi.test', 'delivered', 250, '2.0.0'],
    ],
  );
  assert.match(outcome.attempts[0].response, /ECONNREFUSED 127\.0\.0\.2/);

  // A greylisting primary (its own sink on 127.0.0.3, same port) gives way to the backup.
  const primary = await startSmtpSink({
    host: '127.0.0.3',
    port: sink.port,
    rules: [{ match: 'user', reply: { code: 421, message: '4.7.0 Too busy' } }],
  });
  t.after(() => primary.close());
  dns.set('grey.test', 'MX', [
    { exchange: 'primary.grey.test', priority: 5 },
    { exchange: 'backup.grey.test', priority: 10 },
  ]);
  dns.set('primary.grey.test', 'A', ['127.0.0.3']);
  dns.set('backup.grey.test', 'A', ['127.0.0.1']);
  const viaBackup = await delivery.deliver({ from: 'b@acme.test', to: 'user@grey.test', raw });
  assert.deepEqual(
    viaBackup.attempts.map((a) => [a.mxHost, a.kind, a.code]),
    [
      ['primary.grey.test', 'temporary', 421],
      ['backup.grey.test', 'delivered', 250],
    ],
  );

  // Every host down: temporary, and the most telling answer (an SMTP reply) is the outcome.
  dns.set('down.test', 'MX', [
    { exchange: 'primary.grey.test', priority: 5 },
    { exchange: 'dead.multi.test', priority: 10 },
  ]);
  const down = await delivery.deliver({ from: 'b@acme.test', to: 'user@down.test', raw });
  assert.deepEqual([down.kind, down.code, down.mxHost, down.attempts.length], ['temporary', 421, 'primary.grey.test', 2]);
});

test('a 5xx greeting makes the next MX try; DNS answers decide before any connection', async (t) => {
  const { dns, sink, delivery } = await setup(t);
  const raw = await message();
  const closed = await startSmtpSink({
    host: '127.0.0.4',
    port: sink.port,
    rejectConnections: { code: 554, message: '5.7.1 No service for you' },
  });
  t.after(() => closed.close());
  dns.set('greet.test', 'MX', [
    { exchange: 'closed.greet.test', priority: 1 },
    { exchange: 'open.greet.test', priority: 2 },
  ]);
  dns.set('closed.greet.test', 'A', ['127.0.0.4']);
  dns.set('open.greet.test', 'A', ['127.0.0.1']);
  const outcome = await delivery.deliver({ from: 'b@acme.test', to: 'x@greet.test', raw });
  assert.deepEqual(
    outcome.attempts.map((a) => [a.mxHost, a.kind, a.code]),
    [
      ['closed.greet.test', 'temporary', 554],
      ['open.greet.test', 'delivered', 250],
    ],
  );
  // When it is the only MX, its 554 is the verdict: 5.7.1 refuses us (a block), not the recipient,
  // so it is retried later (docs/delivery.md).
  dns.set('onlyclosed.test', 'MX', [{ exchange: 'closed.greet.test', priority: 1 }]);
  const refused = await delivery.deliver({ from: 'b@acme.test', to: 'x@onlyclosed.test', raw });
  assert.deepEqual([refused.kind, refused.code, refused.enhancedCode, refused.reason], ['temporary', 554, '5.7.1', 'policy_block']);

  // No MX but an A record: the domain itself is the mail host (implicit MX).
  dns.set('implicit.test', 'A', ['127.0.0.1']);
  const implicit = await delivery.deliver({ from: 'b@acme.test', to: 'x@implicit.test', raw });
  assert.deepEqual([implicit.kind, implicit.mxHost], ['delivered', 'implicit.test']);

  const before = sink.connections + closed.connections;
  dns.set('nullmx.test', 'MX', [{ exchange: '.', priority: 0 }]);
  const nullMx = await delivery.deliver({ from: 'b@acme.test', to: 'x@nullmx.test', raw });
  assert.deepEqual(
    { ...nullMx, attempts: nullMx.attempts.length },
    {
      kind: 'permanent',
      code: null,
      enhancedCode: '5.1.10',
      response: 'Domain nullmx.test does not accept mail (null MX)',
      mxHost: null,
      address: null,
      reason: 'host_unknown',
      attempts: 1,
    },
  );
  const nx = await delivery.deliver({ from: 'b@acme.test', to: 'x@no-such-domain.test', raw });
  assert.deepEqual([nx.kind, nx.enhancedCode], ['permanent', '5.1.2']);
  dns.hang('timeout.test');
  const timeout = await delivery.deliver({ from: 'b@acme.test', to: 'x@timeout.test', raw });
  assert.deepEqual([timeout.kind, timeout.enhancedCode], ['temporary', '4.4.3']);
  const syntax = await delivery.deliver({ from: 'b@acme.test', to: 'no-at-sign', raw });
  assert.deepEqual([syntax.kind, syntax.enhancedCode], ['permanent', '5.1.3']);
  assert.equal(sink.connections + closed.connections, before, 'no connection for domains DNS already ruled out');
});

test('without STARTTLS on offer, or when the TLS handshake fails, the message still goes out in clear text', async (t) => {
  const plain = await setup(t, { starttls: false });
  const outcome = await plain.delivery.deliver({ from: 'b@acme.test', to: 'x@rcpt.test', raw: await message() });
  assert.equal(outcome.kind, 'delivered');
  assert.equal(plain.sink.messages[0].secure, false);

  // A server whose only TLS 1.2 cipher no client accepts: STARTTLS fails, the retry skips it.
  const broken = await setup(t, { tls: { ciphers: 'NULL-SHA256', maxVersion: 'TLSv1.2' } });
  const retried = await broken.delivery.deliver({ from: 'b@acme.test', to: 'x@rcpt.test', raw: await message() });
  assert.equal(retried.kind, 'delivered', JSON.stringify(retried));
  assert.deepEqual(
    retried.attempts.map((a) => [a.kind, a.enhancedCode]),
    [
      ['temporary', '4.7.5'],
      ['delivered', '2.0.0'],
    ],
  );
  assert.equal(broken.sink.messages.length, 1);
  assert.equal(broken.sink.messages[0].secure, false);
});

test('connections are reused per destination and capped', async (t) => {
  const { sink, delivery, dns } = await setup(t);
  const raw = await message();
  for (let i = 0; i < 5; i++) {
    const outcome = await delivery.deliver({ from: 'b@acme.test', to: `user${i}@rcpt.test`, raw });
    assert.equal(outcome.kind, 'delivered');
  }
  assert.equal(sink.connections, 1, 'one connection for five messages');
  assert.equal(new Set(sink.messages.map((m) => m.connectionId)).size, 1);
  assert.equal(
    dns.queries.filter((q) => q.name === 'rcpt.test' && q.type === 'MX' && !q.authenticated).length,
    1,
    'the MX answer is reused',
  );
  assert.equal(
    dns.queries.filter((q) => q.name === 'rcpt.test' && q.type === 'MX' && q.authenticated).length,
    1,
    "DANE's authenticated MX check is reused too",
  );
  assert.equal(dns.queries.filter((q) => q.name === 'mx.rcpt.test' && q.type === 'A').length, 1, 'the address answer is reused');
  // A refused recipient does not cost the connection: it is reset (RSET), not closed. (The next
  // message may open a second one while the RSET is under way.)
  assert.equal((await delivery.deliver({ from: 'b@acme.test', to: 'bounce@rcpt.test', raw })).kind, 'permanent');
  assert.equal((await delivery.deliver({ from: 'b@acme.test', to: 'user5@rcpt.test', raw })).kind, 'delivered');
  assert.ok(sink.connections <= 2);
  assert.equal(sink.openConnections, sink.connections, 'no connection was closed');

  // Another domain whose MX is the same host shares the pool.
  dns.set('other.test', 'MX', [{ exchange: 'mx.rcpt.test', priority: 10 }]);
  const connectionsBefore = sink.connections;
  assert.equal((await delivery.deliver({ from: 'b@acme.test', to: 'x@other.test', raw })).kind, 'delivered');
  assert.equal(sink.connections, connectionsBefore);

  // Twenty at once with a cap of 3 per destination (a fresh destination: its own sink on 127.0.0.5).
  const busy = await startSmtpSink({ host: '127.0.0.5', port: sink.port });
  t.after(() => busy.close());
  dns.set('busy.test', 'MX', [{ exchange: 'mx.busy.test', priority: 10 }]);
  dns.set('mx.busy.test', 'A', ['127.0.0.5']);
  const capped = new SmtpDelivery({
    resolver: delivery.options.resolver,
    heloName: 'mta.postlane.test',
    mxPort: sink.port,
    maxConnectionsPerDestination: 3,
  });
  t.after(() => capped.close());
  const outcomes = await Promise.all(
    Array.from({ length: 20 }, (_, i) => capped.deliver({ from: 'b@acme.test', to: `p${i}@busy.test`, raw })),
  );
  assert.ok(outcomes.every((o) => o.kind === 'delivered'));
  assert.equal(busy.accepted, 20);
  assert.ok(busy.maxOpenConnections <= 3, `at most 3 connections at once, saw ${busy.maxOpenConnections}`);
  assert.ok(busy.connections <= 3, `connections reused, opened ${busy.connections}`);
});

test('lines that are a lone dot or start with dots arrive byte for byte, message after message on one connection, in clear and over TLS', async (t) => {
  // The message and its terminating dot leave in one write (raw-send.ts corks the socket): a
  // stuffing or terminator out of place would cut a message at its lone-dot line or run two together.
  const raw = (i: number) =>
    Buffer.from(
      [
        `From: a@acme.test`,
        `To: x@rcpt.test`,
        `Subject: dots ${i}`,
        `Message-ID: <dots${i}@acme.test>`,
        '',
        'before',
        '.',
        '..two',
        '.leading',
        `end ${i}`,
        '',
      ].join('\r\n'),
    );
  for (const starttls of [true, false]) {
    const { sink, delivery } = await setup(t, { starttls });
    for (let i = 0; i < 3; i++)
      assert.equal((await delivery.deliver({ from: 'b@acme.test', to: `u${i}@rcpt.test`, raw: raw(i) })).kind, 'delivered');
    assert.equal(sink.connections, 1);
    assert.deepEqual(
      sink.messages.map((m) => m.secure),
      [starttls, starttls, starttls],
    );
    sink.messages.forEach((m, i) =>
      assert.ok(m.raw.equals(raw(i)), `message ${i} (${starttls ? 'TLS' : 'clear'}) arrived as sent:\n${m.raw.toString()}`),
    );
  }
});

test('SMARTHOST_URL: every message goes through the relay with AUTH, whatever the recipient domain', async (t) => {
  const dns = await startDnsServer();
  const relay = await startSmtpSink({ auth: { user: 'relay-user', pass: 'p@ss word' } });
  t.after(async () => {
    await relay.close();
    await dns.close();
  });
  const resolver = createResolver([dns.address], { timeoutMs: 300, tries: 1 });
  dns.set('relay.test', 'A', ['127.0.0.1']);
  const raw = await message();

  const delivery = createSmtpDelivery(
    {
      mailHostname: 'mta.postlane.test',
      mxPort: 25,
      smarthostUrl: `smtp://relay-user:p%40ss%20word@relay.test:${relay.port}?tls.rejectUnauthorized=false`,
    },
    resolver,
  );
  t.after(() => delivery.close());
  const outcome = await delivery.deliver({ from: 'b@acme.test', to: 'anyone@domain-without-dns.test', raw });
  assert.deepEqual([outcome.kind, outcome.code, outcome.mxHost, outcome.address], ['delivered', 250, 'relay.test', '127.0.0.1']);
  assert.deepEqual(
    relay.messages.map((m) => [m.user, m.rcptTo[0], m.secure, m.heloName]),
    [['relay-user', 'anyone@domain-without-dns.test', true, 'mta.postlane.test']],
  );
  assert.ok(!dns.queries.some((q) => q.type === 'MX'), 'no MX lookups with a smarthost');
  // The relay's verdicts come through as they are.
  const refused = await delivery.deliver({ from: 'b@acme.test', to: 'bounce@x.test', raw });
  assert.deepEqual([refused.kind, refused.code], ['permanent', 550]);

  // Wrong credentials are our configuration problem: temporary, not a bounce.
  const badAuth = createSmtpDelivery(
    {
      mailHostname: 'mta.postlane.test',
      mxPort: 25,
      smarthostUrl: `smtp://relay-user:wrong@127.0.0.1:${relay.port}?tls.rejectUnauthorized=false`,
    },
    resolver,
  );
  t.after(() => badAuth.close());
  const denied = await badAuth.deliver({ from: 'b@acme.test', to: 'x@y.test', raw });
  assert.deepEqual([denied.kind, denied.code], ['temporary', 535]);

  // A relay that refuses us at the greeting: also ours to fix, so temporary.
  const closedRelay = await startSmtpSink({ rejectConnections: { code: 554, message: '5.7.1 Relay access denied' } });
  t.after(() => closedRelay.close());
  const viaClosed = createSmtpDelivery(
    { mailHostname: 'mta.postlane.test', mxPort: 25, smarthostUrl: `smtp://127.0.0.1:${closedRelay.port}` },
    resolver,
  );
  t.after(() => viaClosed.close());
  const closedOutcome = await viaClosed.deliver({ from: 'b@acme.test', to: 'x@y.test', raw });
  assert.deepEqual([closedOutcome.kind, closedOutcome.code], ['temporary', 554]);

  // Certificates are verified by default: the sink's self-signed one is refused.
  const strict = createSmtpDelivery(
    { mailHostname: 'mta.postlane.test', mxPort: 25, smarthostUrl: `smtp://relay-user:x@relay.test:${relay.port}` },
    resolver,
  );
  t.after(() => strict.close());
  const untrusted = await strict.deliver({ from: 'b@acme.test', to: 'x@y.test', raw });
  assert.deepEqual([untrusted.kind, untrusted.enhancedCode], ['temporary', '4.7.5']);
  assert.equal(relay.messages.length, 1);
});

test('smtps:// smarthost uses implicit TLS', async (t) => {
  const relay = await startSmtpSink({ secure: true });
  t.after(() => relay.close());
  const delivery = new SmtpDelivery({
    resolver: createResolver([]),
    heloName: 'mta.postlane.test',
    smarthostUrl: `smtps://localhost:${relay.port}?tls.rejectUnauthorized=false`,
  });
  t.after(() => delivery.close());
  const outcome = await delivery.deliver({ from: 'b@acme.test', to: 'x@y.test', raw: await message() });
  assert.deepEqual([outcome.kind, outcome.mxHost], ['delivered', 'localhost']);
  assert.equal(relay.messages[0].secure, true);
});

test('SMTP error classification and smarthost URLs', () => {
  const err = (props: Record<string, unknown>) => Object.assign(new Error(String(props.message ?? 'x')), props);
  assert.deepEqual(
    classifySmtpError(err({ responseCode: 552, response: '552 5.3.4 Message too big', command: 'DATA', code: 'EMESSAGE' })),
    {
      kind: 'permanent',
      code: 552,
      enhancedCode: '5.3.4',
      response: '552 5.3.4 Message too big',
      hostLevel: false,
      reason: 'message_too_large',
      command: 'DATA',
    },
  );
  assert.equal(classifySmtpError(err({ responseCode: 503, response: '503 bad sequence', command: 'RCPT TO' })).kind, 'temporary');
  assert.deepEqual(classifySmtpError(err({ responseCode: 550, response: '550 Access denied', command: 'RCPT TO' })).enhancedCode, '5.0.0');
  assert.deepEqual(classifySmtpError(err({ responseCode: 421, response: '421 4.7.0 closing', command: 'CONN' })), {
    kind: 'temporary',
    code: 421,
    enhancedCode: '4.7.0',
    response: '421 4.7.0 closing',
    hostLevel: true,
    reason: 'policy_block',
    command: 'CONN',
  });
  assert.deepEqual(classifySmtpError(err({ message: 'Greeting never received', code: 'ETIMEDOUT', command: 'CONN' })), {
    kind: 'temporary',
    code: null,
    enhancedCode: '4.4.1',
    response: 'Greeting never received',
    hostLevel: true,
    reason: 'network_error',
  });
  assert.equal(
    classifySmtpError(err({ message: 'Connection closed unexpectedly', code: 'ECONNECTION', command: 'DATA' })).enhancedCode,
    '4.4.2',
  );

  assert.deepEqual(parseSmarthostUrl('smtp://user:p%40ss@relay.example.com:2525'), {
    host: 'relay.example.com',
    port: 2525,
    secure: false,
    auth: { user: 'user', pass: 'p@ss' },
    verifyCertificate: true,
  });
  assert.deepEqual(parseSmarthostUrl('smtps://relay.example.com?tls.rejectUnauthorized=false'), {
    host: 'relay.example.com',
    port: 465,
    secure: true,
    verifyCertificate: false,
  });
  assert.equal(parseSmarthostUrl('smtp://[::1]').host, '::1');
  assert.throws(() => parseSmarthostUrl('http://relay.example.com'), /smtp:\/\/ or smtps:\/\//);
});
