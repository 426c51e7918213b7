// Open and click tracking end to end: delivered HTML with rewritten links and a pixel, then the
// tracking endpoints (any Host) redirect / answer a GIF and record email.loaded / email.clicked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startDeliveryApp, type DeliveryApp } from './helpers.ts';
import { eventually } from '../../helpers/app.ts';
import { isoFromMs, nowMs } from '../../../src/platform/clock.ts';

let app: DeliveryApp;

before(async () => {
  app = await startDeliveryApp();
});
after(async () => {
  await app.close();
});

/** A GET to the app with any Host header (the tracking host's CNAME points at the server). */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, any>; body: Buffer }> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const HTML = `<html><head><title>t</title></head><body>
<p><a class="btn" href="https://shop.example.com/cart?item=1&amp;qty=2#top">Cart</a></p>
<p><a href='http://example.net/path?x=%20y&z=a+b'>Single</a></p>
<p><a href="mailto:help@acme.test?subject=Hi">Mail</a> <a href="#section">Anchor</a> <a href="/relative">Rel</a></p>
<p><a data-href="https://nope.example.com/" href = "https://shop.example.com/cart?item=1&amp;qty=2#top">Again</a></p>
<p><a title="a > b" href=https://bare.example.org/p?q=1>Bare</a></p>
</body></html>`;

const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

async function sendTracked(to: string, tracking: unknown = { loads: true, clicks: true }) {
  const res = await app.api.post('/v2/emails', {
    from: 'Acme <hello@acme.test>',
    to,
    subject: 'Tracked',
    html: HTML,
    text: 'Plain https://shop.example.com/',
    tracking,
    meta: { list: 'april' },
  });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.tracking, { loads: true, clicks: true });
  const id = res.body.id as string;
  await app.waitForStatus(id, 'delivered');
  const message = app.sink.messages.find((m) => m.rcptTo.includes(to))!;
  const parsed = await app.parse(message.raw);
  return { id, html: String(parsed.html), text: String(parsed.text), raw: message.raw };
}

function hrefs(html: string): string[] {
  const tags = html.match(/<a\b(?:[^>"']|"[^"]*"|'[^']*')*>/g) ?? [];
  return tags.map((tag) => {
    const m = /\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/.exec(tag)!;
    return m[1] ?? m[2] ?? m[3];
  });
}

test('links are rewritten to the tracking host, a pixel is added, everything else is untouched', async () => {
  const { id, html, text, raw } = await sendTracked('reader@example.org');
  const links = hrefs(html);
  const click = /^http:\/\/go\.acme\.test\/c\/([A-Za-z0-9_-]{32})$/;
  assert.match(links[0], click);
  assert.match(links[1], click);
  assert.deepEqual(links.slice(2, 5), ['mailto:help@acme.test?subject=Hi', '#section', '/relative']);
  assert.equal(links[5], links[0], 'the same URL is one link');
  assert.match(links[6], click);
  assert.equal(new Set([links[0], links[1], links[6]]).size, 3);
  assert.match(html, /data-href="https:\/\/nope\.example\.com\/"/);
  assert.match(
    html,
    /<img src="http:\/\/go\.acme\.test\/o\/[A-Za-z0-9_-]{32}\.gif" width="1" height="1" alt="" style="border:0;width:1px;height:1px;" \/><\/body>/,
  );
  assert.equal(text.trim(), 'Plain https://shop.example.com/');
  // The tracked message is what was signed.
  const dkim = await app.verifyDkim(raw);
  assert.equal(dkim.results[0].status.result, 'pass');

  const stored = await app.running.ctx.db.selectFrom('tracking_links').selectAll().where('email_id', '=', id).execute();
  assert.deepEqual(
    stored.map((l) => [l.kind, l.url]).sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
    [
      ['click', 'http://example.net/path?x=%20y&z=a+b'],
      ['click', 'https://bare.example.org/p?q=1'],
      ['click', 'https://shop.example.com/cart?item=1&qty=2#top'],
      ['open', null],
    ],
  );
});

test('a click redirects to the original URL whatever the Host, records email.clicked and moves the status', async () => {
  const { id, html } = await sendTracked('clicker@example.org');
  const [cart, single] = hrefs(html);
  const cartPath = new URL(cart).pathname;

  const res = await get(cartPath, { host: 'go.acme.test', 'user-agent': 'TestMail/1.0' });
  assert.equal(res.status, 302);
  assert.equal(res.headers.location, 'https://shop.example.com/cart?item=1&qty=2#top');
  assert.match(res.headers['cache-control'], /no-store/);
  const other = await get(new URL(single).pathname, { host: 'anything.invalid' });
  assert.equal(other.headers.location, 'http://example.net/path?x=%20y&z=a+b');

  const row = await app.waitForStatus(id, 'clicked');
  const email = await app.email(id);
  const events = (await app.eventsOf(id)).filter((e) => e.type === 'email.clicked');
  assert.equal(events.length, 2);
  const link = await app.running.ctx.db
    .selectFrom('tracking_links')
    .selectAll()
    .where('token', '=', cartPath.slice(3))
    .executeTakeFirstOrThrow();
  const hit = await app.running.ctx.db.selectFrom('tracking_hits').selectAll().where('link_id', '=', link.id).executeTakeFirstOrThrow();
  assert.match(hit.id, /^click_[A-Za-z0-9]{27}$/);
  assert.match(link.id, /^link_[A-Za-z0-9]{27}$/);
  assert.deepEqual(events[0].object, {
    id: hit.id,
    object: 'click',
    email: {
      id,
      rcpt_to: 'clicker@example.org',
      mail_from: 'hello@acme.test',
      subject: 'Tracked',
      created_at: email.created_at,
      meta: { list: 'april' },
    },
    link: { id: link.id, url: 'https://shop.example.com/cart?item=1&qty=2#top' },
    ip_address: '127.0.0.1',
    user_agent: 'TestMail/1.0',
    created_at: hit.created_at,
  });
  assert.equal(row.status, 'clicked');

  // A load after a click is recorded, but the status never moves back.
  const pixel = /src="http:\/\/go\.acme\.test(\/o\/[^"]+)"/.exec(html)![1];
  const open = await get(pixel);
  assert.equal(open.status, 200);
  assert.equal(open.headers['content-type'], 'image/gif');
  assert.deepEqual(open.body, GIF);
  await eventually(async () => (await app.eventsOf(id)).some((e) => e.type === 'email.loaded'), 5000);
  assert.equal((await app.email(id)).status, 'clicked');
});

test('an open records email.loaded and moves delivered → loaded; repeats inside the window are counted, not re-emitted', async () => {
  const { id, html } = await sendTracked('opener@example.org');
  const pixel = /src="http:\/\/go\.acme\.test(\/o\/[^"]+)"/.exec(html)![1];
  for (let i = 0; i < 3; i++) assert.equal((await get(pixel, { 'user-agent': 'Viewer' })).status, 200);
  await app.waitForStatus(id, 'loaded');
  const loads = (await app.eventsOf(id)).filter((e) => e.type === 'email.loaded');
  assert.equal(loads.length, 1);
  const hits = await app.running.ctx.db.selectFrom('tracking_hits').selectAll().where('email_id', '=', id).orderBy('created_at').execute();
  assert.deepEqual(
    hits.map((h) => [h.kind, h.emitted]),
    [
      ['load', 1],
      ['load', 0],
      ['load', 0],
    ],
  );
  const email = await app.email(id);
  assert.deepEqual(loads[0].object, {
    id: hits[0].id,
    object: 'load',
    email: {
      id,
      rcpt_to: 'opener@example.org',
      mail_from: 'hello@acme.test',
      subject: 'Tracked',
      created_at: email.created_at,
      meta: { list: 'april' },
    },
    ip_address: '127.0.0.1',
    user_agent: 'Viewer',
    created_at: hits[0].created_at,
  });
  assert.match(hits[0].id, /^load_/);

  // After the window, a new open is a new event.
  await app.running.ctx.db
    .updateTable('tracking_hits')
    .set({ created_at: isoFromMs(nowMs() - 120_000) })
    .where('email_id', '=', id)
    .execute();
  await get(pixel);
  await eventually(async () => (await app.eventsOf(id)).filter((e) => e.type === 'email.loaded').length === 2, 5000);

  // A click then moves loaded → clicked; a double click is one event.
  const [cart] = hrefs(html);
  await get(new URL(cart).pathname);
  await get(new URL(cart).pathname);
  await app.waitForStatus(id, 'clicked');
  assert.equal((await app.eventsOf(id)).filter((e) => e.type === 'email.clicked').length, 1);
  assert.equal(
    (await app.running.ctx.db.selectFrom('tracking_hits').select('id').where('email_id', '=', id).where('kind', '=', 'click').execute())
      .length,
    2,
  );
});

test('unknown tokens: a click answers 404, a pixel still answers the GIF', async () => {
  const click = await get('/c/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
  assert.equal(click.status, 404);
  assert.equal(click.body.toString(), 'Link not found');
  assert.equal((await get('/c/not-a-token!')).status, 404);
  const pixel = await get('/o/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.gif');
  assert.equal(pixel.status, 200);
  assert.deepEqual(pixel.body, GIF);
});

test('without tracking the HTML goes out unchanged', async () => {
  const res = await app.api.post('/v2/emails', {
    from: 'hello@acme.test',
    to: 'plain@example.org',
    subject: 'Plain',
    html: HTML,
    tracking: false,
  });
  assert.deepEqual(res.body.tracking, { loads: false, clicks: false });
  await app.waitForStatus(res.body.id, 'delivered');
  const message = app.sink.messages.find((m) => m.rcptTo.includes('plain@example.org'))!;
  const parsed = await app.parse(message.raw);
  assert.equal(String(parsed.html).trimEnd(), HTML);
  assert.equal(
    (await app.running.ctx.db.selectFrom('tracking_links').select('id').where('email_id', '=', res.body.id).execute()).length,
    0,
  );
});
