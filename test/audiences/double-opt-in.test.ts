// Double opt-in end to end: a visitor signs up on the hosted page (no JavaScript: plain form
// posts), the confirmation email is delivered by the real delivery path to an SMTP sink
// (DKIM-signed), the signed link in it confirms; the API's double_opt_in add does the same.
// Also the audience-level leave page and the hosted pages' refusals.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { eventually } from '../helpers/app.ts';
import { leaveUrl } from '../../src/resources/audiences/links.ts';

let app: DeliveryApp;
let audience: any;

before(async () => {
  app = await startDeliveryApp();
  const res = await app.api.post('/v2/audiences', {
    name: 'Acme news',
    visibility: 'public',
    public_name: 'Acme Weekly',
    public_description: 'News from Acme, every Monday.',
    double_opt_in: { enabled: true, email: { from: 'Acme <news@acme.test>', subject: 'Please confirm: Acme Weekly' } },
  });
  assert.equal(res.status, 201, res.text);
  audience = res.body;
});
after(() => app.close());

async function page(path: string, form?: Record<string, string>) {
  const response = await fetch(
    `${app.url}${path}`,
    form ? { method: 'POST', body: new URLSearchParams(form), redirect: 'manual' } : { redirect: 'manual' },
  );
  return { status: response.status, headers: response.headers, html: await response.text() };
}

/** The confirmation link received by `address`, as a path on this server. */
async function confirmationLink(address: string, nth = 0): Promise<{ path: string; raw: Buffer }> {
  const message = await eventually(async () => app.sink.messages.filter((m) => m.rcptTo.includes(address))[nth], 15_000);
  const parsed = await app.parse(message.raw);
  const match = /https?:\/\/[^\s"<>]+\/subscribe\/confirm\/[A-Za-z0-9_.-]+/.exec(parsed.text ?? '');
  assert.ok(match, `a confirmation link in: ${parsed.text}`);
  assert.ok(parsed.html && (parsed.html as string).includes(match[0].replace(/&/g, '&amp;')), 'the html part carries the same link');
  return { path: new URL(match[0]).pathname, raw: message.raw };
}

const formAction = (html: string) => /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');

test('hosted page → confirmation email at the sink → the signed link confirms; nothing before that', async () => {
  const form = await page(`/subscribe/${audience.token}`);
  assert.equal(form.status, 200);
  assert.match(form.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(form.html, /<html lang="en">/);
  assert.match(form.html, /<h1>Subscribe to Acme Weekly<\/h1>/);
  assert.match(form.html, /<label for="email">Email address<\/label>\s*<input id="email" name="email" type="email"/);
  assert.doesNotMatch(form.html, /<script/i, 'no JavaScript needed');

  const invalid = await page(`/subscribe/${audience.token}`, { email: 'not-an-address', first_name: 'Jane' });
  assert.equal(invalid.status, 400);
  assert.match(invalid.html, /role="alert"/);
  assert.match(invalid.html, /value="Jane"/, 'what was typed is kept');

  const sent = await page(formAction(form.html)!, { email: 'Jane@Example.org', first_name: 'Jane', last_name: 'Doe' });
  assert.equal(sent.status, 200);
  assert.match(sent.html, /Check your inbox/);
  assert.equal((await app.api.get('/v2/contacts/jane%40example.org')).status, 404, 'no contact before confirmation');
  assert.equal((await app.api.get(`/v2/audiences/${audience.id}/subscribers`)).body.total_records, 0);

  const { path, raw } = await confirmationLink('jane@example.org');
  const parsed = await app.parse(raw);
  assert.equal(parsed.subject, 'Please confirm: Acme Weekly');
  assert.equal((parsed.from as any).text, '"Acme" <news@acme.test>');
  const dkim = await app.verifyDkim(raw);
  assert.equal(dkim.results[0].status.result, 'pass', 'signed like every mail');
  const email = (await app.api.get('/v2/emails?type=outbound')).body.data.find((e: any) => e.to === 'jane@example.org');
  assert.ok(email, 'the confirmation is an email of the workspace');

  const confirmPage = await page(path);
  assert.equal(confirmPage.status, 200);
  assert.match(confirmPage.html, /Subscribe jane@example\.org to Acme Weekly\?/);
  assert.equal(
    (await app.api.get(`/v2/audiences/${audience.id}/subscribers`)).body.total_records,
    0,
    'opening the link alone (a mail scanner) confirms nothing',
  );
  const confirmed = await page(formAction(confirmPage.html)!, {});
  assert.equal(confirmed.status, 200);
  assert.match(confirmed.html, /Subscription confirmed/);

  const subscriber = (await app.api.get(`/v2/audiences/${audience.id}/subscribers/jane%40example.org`)).body;
  assert.equal(subscriber.subscribed, true);
  assert.equal(subscriber.contact.first_name, 'Jane');
  assert.equal(subscriber.contact.last_name, 'Doe');
  const again = await page(path, {});
  assert.equal(again.status, 200, 'following the link twice is harmless');
  assert.equal((await app.api.get(`/v2/audiences/${audience.id}`)).body.subscribers_count, 1);
  assert.match((await page(path)).html, /Already confirmed/);

  const forged = await page(path.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')));
  assert.equal(forged.status, 404);
});

test('API add with double_opt_in → 202, the link resubscribes a contact who had unsubscribed from everything', async () => {
  await app.api.post('/v2/contacts', { email: 'back@example.org', unsubscribed: true, first_name: 'Was' });
  const res = await app.api.post(`/v2/audiences/${audience.id}/subscribers`, {
    email: 'back@example.org',
    first_name: 'Back',
    double_opt_in: true,
  });
  assert.equal(res.status, 202, res.text);
  assert.equal(res.body.object, 'subscriber_confirmation');
  assert.match(res.body.email_id, /^em_/);
  assert.equal((await app.api.get('/v2/contacts/back%40example.org')).body.audiences.length, 0);
  const { path } = await confirmationLink('back@example.org');
  assert.equal((await page(path, {})).status, 200);
  const contact = (await app.api.get('/v2/contacts/back%40example.org')).body;
  assert.equal(contact.unsubscribed, false, 'confirmed consent lifts the unsubscribe');
  assert.equal(contact.first_name, 'Back');
  assert.equal(contact.audiences[0].subscriber.subscribed, true);
});

test('redirect_url after confirming; leave page unsubscribes one audience on POST only; private audiences have no page', async () => {
  await app.api.post(`/v2/audiences/${audience.id}`, { double_opt_in: { redirect_url: 'https://acme.test/thanks' } });
  await app.api.post(`/v2/audiences/${audience.id}/subscribers`, { email: 'redirected@example.org', double_opt_in: true });
  const { path } = await confirmationLink('redirected@example.org');
  // The confirm page's form may lead there: browsers hold a post's redirect to form-action.
  const ask = await page(path);
  assert.match(ask.headers.get('content-security-policy') ?? '', /; form-action 'self' https:\/\/acme\.test;/);
  const confirmed = await page(path, {});
  assert.equal(confirmed.status, 303);
  assert.equal(confirmed.headers.get('location'), 'https://acme.test/thanks');

  const subscriber = (await app.api.get(`/v2/audiences/${audience.id}/subscribers/redirected%40example.org`)).body;
  const leave = new URL(leaveUrl(app.running.ctx, subscriber.id)).pathname;
  const leaving = await page(leave);
  assert.match(leaving.html, /Stop sending Acme Weekly to redirected@example\.org\?/);
  assert.equal((await app.api.get(`/v2/audiences/${audience.id}/subscribers/${subscriber.id}`)).body.subscribed, true);
  const done = await page(leave, {});
  assert.match(done.html, /will no longer receive Acme Weekly/);
  const after = (await app.api.get(`/v2/audiences/${audience.id}/subscribers/${subscriber.id}`)).body;
  assert.equal(after.subscribed, false);
  assert.ok(after.unsubscribed_at);
  assert.equal((await page(leave.slice(0, -3) + 'xyz')).status, 404);

  const hidden = (await app.api.post('/v2/audiences', { name: 'Internal' })).body;
  assert.equal((await page(`/subscribe/${hidden.token}`)).status, 404);
  assert.equal((await page('/subscribe/nosuchtoken')).status, 404);
});

test('single opt-in public page subscribes at once', async () => {
  const open = (await app.api.post('/v2/audiences', { name: 'Open list', visibility: 'public' })).body;
  const done = await page(`/subscribe/${open.token}`, { email: 'quick@example.org' });
  assert.equal(done.status, 200);
  assert.match(done.html, /is now subscribed to Open list/);
  assert.equal((await app.api.get(`/v2/audiences/${open.id}/subscribers/quick%40example.org`)).body.subscribed, true);
  assert.match((await page(`/subscribe/${open.token}`, { email: 'quick@example.org' })).html, /Already subscribed/);
});

test('confirmation_email on: a new subscriber gets one email saying so (API add, hosted page); none for an existing one or when off', async () => {
  const created = await app.api.post('/v2/audiences', {
    name: 'Welcomed',
    visibility: 'public',
    confirmation_email: {
      enabled: true,
      email: {
        from: 'Acme <news@acme.test>',
        subject: 'Welcome to Welcomed',
        button_url: 'https://acme.test/start',
        button_label: 'Get started',
      },
    },
  });
  assert.equal(created.status, 201, created.text);
  const welcomed = created.body;
  const received = (address: string) => app.sink.messages.filter((m) => m.rcptTo.includes(address));

  assert.equal((await app.api.post(`/v2/audiences/${welcomed.id}/subscribers`, { email: 'new.one@example.org' })).status, 201);
  const message = await eventually(async () => received('new.one@example.org')[0], 15_000);
  const parsed = await app.parse(message.raw);
  assert.equal(parsed.subject, 'Welcome to Welcomed');
  assert.match(parsed.text ?? '', /You are now subscribed to Welcomed\.[\s\S]*Get started: https:\/\/acme\.test\/start/);
  assert.match(String(parsed.html), /<a href="https:\/\/acme\.test\/start"[^>]*>Get started<\/a>/);

  // The hosted page (single opt-in) welcomes too.
  const form = await page(`/subscribe/${welcomed.token}`);
  assert.equal((await page(formAction(form.html)!, { email: 'visitor@example.org' })).status, 200);
  await eventually(async () => received('visitor@example.org')[0], 15_000);

  // Already subscribed: 409 and no second email; an audience without it sends nothing.
  assert.equal((await app.api.post(`/v2/audiences/${welcomed.id}/subscribers`, { email: 'new.one@example.org' })).status, 409);
  const quiet = (await app.api.post('/v2/audiences', { name: 'Quiet' })).body;
  assert.equal((await app.api.post(`/v2/audiences/${quiet.id}/subscribers`, { email: 'silent@example.org' })).status, 201);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(received('new.one@example.org').length, 1);
  assert.equal(received('silent@example.org').length, 0);
});
