import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import { bracketMessageId, composeMessage, customHeaders, forgetEncodedBodies } from '../../src/mail/compose.ts';

const headerBlock = (raw: Buffer) => raw.toString('utf8').split('\r\n\r\n')[0];

test('html + text become multipart/alternative with our Message-ID and no Bcc header', async () => {
  const raw = await composeMessage({
    from: 'Acme Shop <orders@acme.test>',
    to: ['Bob <bob@example.com>', 'carol@example.com'],
    cc: ['dave@example.com'],
    replyTo: 'help@acme.test',
    subject: 'Your order ✓',
    html: '<p>Thanks!</p>',
    text: 'Thanks!',
    messageId: '2gG6QwWJ0hR1x1wJbYq8sVZ3nQp@acme.test',
    date: new Date('2024-05-14T09:00:00Z'),
    headers: { 'Message-ID': '<user-chosen@evil.test>', Bcc: 'hidden@example.com', 'X-Campaign': 'spring' },
  });
  const text = raw.toString('utf8');
  assert.doesNotMatch(text, /(^|\n)[^\r\n]*[^\r]\n/, 'CRLF line endings only');
  assert.doesNotMatch(headerBlock(raw), /^bcc:/im);
  assert.doesNotMatch(text, /hidden@example\.com|user-chosen/);
  const mail = await simpleParser(raw);
  assert.equal(mail.messageId, '<2gG6QwWJ0hR1x1wJbYq8sVZ3nQp@acme.test>');
  assert.equal(mail.from?.text, '"Acme Shop" <orders@acme.test>');
  assert.equal(mail.headers.get('to') && (mail.to as any).value.map((a: any) => a.address).join(','), 'bob@example.com,carol@example.com');
  assert.equal((mail.cc as any).value[0].address, 'dave@example.com');
  assert.equal((mail.replyTo as any).value[0].address, 'help@acme.test');
  assert.equal(mail.subject, 'Your order ✓');
  assert.equal(mail.date?.toISOString(), '2024-05-14T09:00:00.000Z');
  assert.equal(mail.headers.get('x-campaign'), 'spring');
  assert.match(String((mail.headers.get('content-type') as any).value), /^multipart\/alternative$/);
  assert.equal(mail.text?.trim(), 'Thanks!');
  assert.equal(mail.html, '<p>Thanks!</p>');
  // The standard headers lead, custom headers follow them.
  assert.deepEqual(
    headerBlock(raw)
      .split('\r\n')
      .filter((l) => /^\S/.test(l))
      .map((l) => l.split(':')[0]),
    ['From', 'To', 'Cc', 'Reply-To', 'Subject', 'Message-ID', 'Date', 'X-Campaign', 'MIME-Version', 'Content-Type'],
  );
});

test('attachments: regular parts in multipart/mixed, content_id parts inline beside the html', async () => {
  const pdf = Buffer.from('%PDF-1.4 fake');
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
  const raw = await composeMessage({
    from: 'a@acme.test',
    to: ['b@example.com'],
    subject: 'Files',
    html: '<p>Logo: <img src="cid:logo"></p>',
    text: 'Logo attached',
    messageId: '<m1@acme.test>',
    attachments: [
      { filename: 'invoice.pdf', content: pdf, contentType: 'application/pdf' },
      { filename: 'logo.png', content: png, contentType: 'image/png', contentId: 'logo' },
      { filename: 'notes.txt', content: Buffer.from('hello') },
    ],
  });
  const text = raw.toString('utf8');
  assert.match(text, /Content-Type: multipart\/mixed/);
  assert.match(text, /Content-Type: multipart\/alternative/);
  assert.match(text, /Content-Type: multipart\/related; type="text\/html"/);
  const mail = await simpleParser(raw);
  const byName = Object.fromEntries(mail.attachments.map((a) => [a.filename, a]));
  assert.deepEqual(Object.keys(byName).sort(), ['invoice.pdf', 'logo.png', 'notes.txt']);
  assert.ok(byName['invoice.pdf'].content.equals(pdf));
  assert.equal(byName['invoice.pdf'].contentType, 'application/pdf');
  assert.equal(byName['invoice.pdf'].contentDisposition, 'attachment');
  assert.ok(byName['logo.png'].content.equals(png));
  assert.equal(byName['logo.png'].cid, 'logo');
  assert.equal(byName['logo.png'].contentDisposition, 'inline');
  assert.equal(byName['logo.png'].related, true);
  assert.equal(byName['notes.txt'].contentType, 'text/plain', 'type guessed from the filename');
});

test('a single body, a text-only message, and no body at all', async () => {
  const htmlOnly = await simpleParser(
    await composeMessage({ from: 'a@acme.test', to: ['b@example.com'], subject: 's', html: '<b>x</b>', messageId: 'h@acme.test' }),
  );
  assert.match(String((htmlOnly.headers.get('content-type') as any).value), /^text\/html$/);
  const textOnly = await simpleParser(
    await composeMessage({ from: 'a@acme.test', to: ['b@example.com'], subject: 's', text: 'plain', messageId: 't@acme.test' }),
  );
  assert.match(String((textOnly.headers.get('content-type') as any).value), /^text\/plain$/);
  assert.equal(textOnly.text?.trim(), 'plain');
  const empty = await composeMessage({ from: 'a@acme.test', subject: 's', messageId: 'e@acme.test' });
  assert.match(headerBlock(empty), /^Content-Type: text\/plain/m);
  assert.doesNotMatch(headerBlock(empty), /^To:/m, 'no To header when only bcc recipients exist');
});

test('custom headers: structural ones ignored, injection folded, invalid names dropped; List-Unsubscribe slot', async () => {
  assert.deepEqual(
    customHeaders({
      'X-Ok': 'a\r\nBcc: evil@x.test',
      'Content-Type': 'text/evil',
      'Bad Name': 'x',
      'X-Ünï': 'x',
      'X-Num': 3,
      'X-Null': null,
      'Return-Path': '<x@y>',
    }),
    [
      { key: 'X-Ok', value: 'a Bcc: evil@x.test' },
      { key: 'X-Num', value: '3' },
    ],
  );
  const raw = await composeMessage({
    from: 'a@acme.test',
    to: ['b@example.com'],
    subject: 's',
    text: 'x',
    messageId: 'l@acme.test',
    headers: { 'List-Unsubscribe': '<mailto:user-chosen@acme.test>', 'X-Entity-Ref-ID': '42' },
    listUnsubscribe: { url: 'https://acme.test/u/abc', mailto: 'unsubscribe@acme.test', oneClick: true },
  });
  const headers = headerBlock(raw);
  assert.match(headers, /^List-Unsubscribe: <https:\/\/acme\.test\/u\/abc>, <mailto:unsubscribe@acme\.test>$/m);
  assert.match(headers, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
  assert.doesNotMatch(headers, /user-chosen/);
  assert.match(headers, /^X-Entity-Ref-ID: 42$/m);
  // Without our slot, a user's own List-Unsubscribe passes through; one-click needs https.
  const own = headerBlock(
    await composeMessage({
      from: 'a@acme.test',
      to: ['b@example.com'],
      subject: 's',
      text: 'x',
      messageId: 'o@acme.test',
      headers: { 'List-Unsubscribe': '<mailto:u@acme.test>' },
    }),
  );
  assert.match(own, /^List-Unsubscribe: <mailto:u@acme\.test>$/m);
  const http = headerBlock(
    await composeMessage({
      from: 'a@acme.test',
      to: ['b@example.com'],
      subject: 's',
      text: 'x',
      messageId: 'p@acme.test',
      listUnsubscribe: { url: 'http://acme.test/u', oneClick: true },
    }),
  );
  assert.doesNotMatch(http, /List-Unsubscribe-Post/);
});

test('Message-ID must be a token at a domain', () => {
  assert.equal(bracketMessageId('abc@acme.test'), '<abc@acme.test>');
  assert.equal(bracketMessageId(' <abc@acme.test> '), '<abc@acme.test>');
  assert.throws(() => bracketMessageId('no-at-sign'), /Message-ID/);
  assert.throws(() => bracketMessageId('a b@c'), /Message-ID/);
});

test('copies sharing a body get their own headers and the same bytes as a fresh composition', async () => {
  const copy = (i: number) =>
    composeMessage({
      from: 'Acme <hello@acme.test>',
      to: [`Bøb ${i} <bob${i}@example.com>`],
      subject: `Order #${i} ✓`,
      html: '<p>Thanks — see you!</p>',
      text: 'Thanks — see you!',
      messageId: `copy-${i}@acme.test`,
      date: new Date('2024-05-14T09:00:00Z'),
      headers: { 'X-Copy': String(i) },
      listUnsubscribe: { url: 'https://acme.test/u', oneClick: true },
    });
  forgetEncodedBodies();
  await copy(1);
  const second = await copy(2);
  forgetEncodedBodies();
  assert.ok(second.equals(await copy(2)));
  const parsed = await simpleParser(second);
  assert.equal(parsed.subject, 'Order #2 ✓');
  assert.equal(parsed.messageId, '<copy-2@acme.test>');
  assert.equal(parsed.headers.get('x-copy'), '2');
  assert.equal(parsed.text?.trim(), 'Thanks — see you!');
  assert.equal(parsed.html, '<p>Thanks — see you!</p>');
});

test('without attachments the message is written directly, byte for byte as MailComposer writes it', async () => {
  const date = new Date('2024-05-14T09:00:00Z');
  const cases = [
    {
      from: 'Acme Shop <orders@acme.test>',
      to: ['Bob <bob@example.com>', 'carol@example.com'],
      cc: ['dave@example.com'],
      replyTo: ['help@acme.test'],
      subject: 'Your order ✓',
      html: '<p>Thanks!</p>',
      text: 'Thanks!',
    },
    {
      from: 'a@acme.test',
      to: ['"Doe, J." <j@x.test>', 'Ünïcode Nåme <u@x.test>'],
      subject: 'x'.repeat(200),
      text: 'line\nbare lf\r\nand . dot\n.leading dot',
    },
    {
      from: 'Ĳssel <a@acme.test>',
      to: ['b@bücher.example'],
      subject: 'Привет мир, это тест длинной темы письма, которая будет закодирована',
      html: '<p>Привет мир</p>'.repeat(20),
    },
    { from: 'a@acme.test', subject: 'no body at all' },
    {
      from: 'a@acme.test',
      to: Array.from({ length: 30 }, (_, i) => `User ${i} <user${i}@example.com>`),
      subject: 'many',
      html: `<b>${'y'.repeat(300)}</b>`,
      headers: { 'X-Long': 'v '.repeat(80), 'x-lower-case': 'k' },
    },
    {
      from: 'a@acme.test',
      to: ['b@example.com'],
      subject: 'tab\there  spaces ',
      text: 'trailing space \nx\t\n',
      html: '<p>trailing </p>\n',
    },
  ];
  for (const [i, c] of cases.entries()) {
    const input = { ...c, messageId: `<m${i}@acme.test>`, date };
    forgetEncodedBodies();
    const ours = (await composeMessage(input)).toString('latin1');
    const node = new MailComposer({
      ...c,
      headers: undefined,
      messageId: input.messageId,
      date,
      text: c.text || (c.html ? undefined : ''),
      baseBoundary: 'b'.repeat(32),
    }).compile();
    for (const header of customHeaders(c.headers)) node.addHeader(header.key, header.value);
    const theirs = (await node.build()).toString('latin1').replace(/\r?\n/g, '\r\n');
    // Only the boundaries differ (ours follow from the body).
    const boundaries = (raw: string) => raw.replace(/--_(NmP|PLP)-[0-9a-z]+-Part_1/g, 'BOUNDARY');
    assert.equal(boundaries(ours), boundaries(theirs), `case ${i}`);
  }
});
