// Link rewriting and the open pixel, on HTML alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyTracking, decodeAttribute, trackableUrl, trackingToken } from '../../../src/resources/emails/delivery/tracking.ts';
import { locationOf } from '../../../src/resources/tracking/routes.ts';

const options = { host: 'go.acme.test', loads: true, clicks: true, token: (slot: string) => `tok-${slot}` };

test('http(s) links of <a> tags are rewritten in any case and quoting; others are not', () => {
  const html = `<A HREF="HTTPS://Example.com/A?b=1">x</A><a href='javascript:alert(1)'>j</a><a href="tel:+123">t</a>
<a href="//cdn.example.com/x">proto-relative</a><a name="top">no href</a><link href="https://css.example.com/s.css">
<a href="  https://spaced.example.com/  ">s</a><a href="{{unsubscribe_url}}">u</a>`;
  const { html: out, links } = applyTracking(html, { ...options, loads: false });
  assert.equal(
    out,
    `<A HREF="http://go.acme.test/c/tok-c0">x</A><a href='javascript:alert(1)'>j</a><a href="tel:+123">t</a>
<a href="//cdn.example.com/x">proto-relative</a><a name="top">no href</a><link href="https://css.example.com/s.css">
<a href="http://go.acme.test/c/tok-c1">s</a><a href="{{unsubscribe_url}}">u</a>`,
  );
  assert.deepEqual(links, [
    { token: 'tok-c0', url: 'HTTPS://Example.com/A?b=1' },
    { token: 'tok-c1', url: 'https://spaced.example.com/' },
  ]);
});

test('character references in href are decoded to the URL a browser follows', () => {
  assert.equal(decodeAttribute('a&amp;b&#38;c&#x26;d&quot;&lt;&unknown;'), 'a&b&c&d"<&unknown;');
  assert.equal(trackableUrl('https://x.example/?a=1&amp;b=%2F#frag&amp;'), 'https://x.example/?a=1&b=%2F#frag&');
  assert.equal(trackableUrl('mailto:a@b.example'), null);
  assert.equal(trackableUrl('#top'), null);
  assert.equal(trackableUrl('http://'), null);
});

test('the pixel goes before the last </body>, or at the end without one; none for clicks only', () => {
  assert.equal(
    applyTracking('<body><p>a</p></BODY >', options).html,
    '<body><p>a</p><img src="http://go.acme.test/o/tok-o.gif" width="1" height="1" alt="" style="border:0;width:1px;height:1px;" /></BODY >',
  );
  assert.equal(
    applyTracking('<p>fragment</p>', options).html,
    '<p>fragment</p><img src="http://go.acme.test/o/tok-o.gif" width="1" height="1" alt="" style="border:0;width:1px;height:1px;" />',
  );
  const clicksOnly = applyTracking('<body>x</body>', { ...options, loads: false });
  assert.equal(clicksOnly.html, '<body>x</body>');
  assert.equal(clicksOnly.pixelToken, null);
});

test('tokens are keyed HMACs: stable per email and slot, different otherwise', () => {
  const secret = Buffer.alloc(32, 7);
  const token = trackingToken(secret, 'em_1', 'c0');
  assert.match(token, /^[A-Za-z0-9_-]{32}$/);
  assert.equal(trackingToken(secret, 'em_1', 'c0'), token);
  assert.notEqual(trackingToken(secret, 'em_1', 'c1'), token);
  assert.notEqual(trackingToken(secret, 'em_2', 'c0'), token);
  assert.notEqual(trackingToken(Buffer.alloc(32, 8), 'em_1', 'c0'), token);
});

test('redirect locations keep ASCII URLs byte for byte and encode the rest like a browser', () => {
  assert.equal(locationOf('https://x.example/a?b=%20c&d=e+f#g'), 'https://x.example/a?b=%20c&d=e+f#g');
  assert.equal(locationOf('https://x.example/ä ö?q=ü'), 'https://x.example/%C3%A4%20%C3%B6?q=%C3%BC');
  assert.equal(locationOf('https://bücher.example/'), 'https://xn--bcher-kva.example/');
});
