// Response headers that keep a browser from misreading what Postlane serves: every answer
// (JSON, errors, CSV, images, scripts, pages, 404s) carries X-Content-Type-Options: nosniff;
// every hosted page (audience subscribe, confirm and leave pages, campaign unsubscribe pages,
// their error pages) carries a Content-Security-Policy that allows nothing but its own inline
// style and forms posting back, refuses framing, and sends no Referer (its URL holds a token).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let app: TestApp;
let audienceToken: string;
before(async () => {
  app = await startTestApp();
  const response = await fetch(`${app.url}/v2/audiences`, {
    method: 'POST',
    headers: { authorization: `Bearer ${app.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Headers', visibility: 'public' }),
  });
  audienceToken = ((await response.json()) as { token: string }).token;
});
after(() => app.close());

const auth = () => ({ authorization: `Bearer ${app.key}` });

test('every answer says nosniff: JSON, errors, 404s, CSV, images, scripts, pages', async () => {
  const requests: Array<[string, string, RequestInit?]> = [
    ['a JSON answer', '/v2/suppressions', { headers: auth() }],
    ['a 401', '/v2/suppressions'],
    ['an unknown route', '/v2/no-such-thing'],
    ['invalid JSON', '/v2/suppressions', { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{' }],
    ['an unknown content type', '/v2/suppressions', { method: 'POST', headers: { ...auth(), 'content-type': 'text/xml' }, body: '<a/>' }],
    ['a CSV export', '/v2/contacts/export', { headers: auth() }],
    ['the tracking pixel', '/o/nothing.gif'],
    ['a click link not found', '/c/nothing'],
    ['the forms script', '/js/nokey/postlane.js'],
    ['health', '/healthz'],
    ['the OpenAPI document', '/openapi.json'],
    ['a hosted page', `/subscribe/${audienceToken}`],
    ['a NUL in the path', '/v2/suppressions/a%00b', { headers: auth() }],
  ];
  for (const [what, path, init] of requests) {
    const response = await fetch(`${app.url}${path}`, { redirect: 'manual', ...init });
    await response.arrayBuffer();
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff', `${what} (${response.status})`);
  }
});

test('hosted pages, their error pages included: a strict CSP, no framing, no Referer', async () => {
  const pages: Array<[string, string, number, RequestInit?]> = [
    ['the subscribe page', `/subscribe/${audienceToken}`, 200],
    ['a subscribe page that does not exist', '/subscribe/nosuchtoken', 404],
    [
      'a refused address',
      `/subscribe/${audienceToken}`,
      400,
      { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=nope' },
    ],
    [
      'a body over 16 KB',
      `/subscribe/${audienceToken}`,
      413,
      { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${'a'.repeat(20_000)}` },
    ],
    [
      'a body of an unknown type',
      `/subscribe/${audienceToken}`,
      415,
      { method: 'POST', headers: { 'content-type': 'application/x-unknown' }, body: 'x' },
    ],
    ['a confirm link not valid', '/subscribe/confirm/nothing', 404],
    ['a leave link not valid', '/subscribe/leave/nothing', 404],
    ['a campaign unsubscribe link not valid', '/unsubscribe/nothing', 404],
    [
      'a campaign unsubscribe post over 16 KB',
      '/unsubscribe/nothing',
      413,
      { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `List-Unsubscribe=${'a'.repeat(20_000)}` },
    ],
  ];
  for (const [what, path, status, init] of pages) {
    const response = await fetch(`${app.url}${path}`, { redirect: 'manual', ...init });
    const html = await response.text();
    assert.equal(response.status, status, `${what}: ${html.slice(0, 200)}`);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/, what);
    assert.match(html, /^<!doctype html>/, what);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(
      csp,
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'$/,
      `${what}: ${csp}`,
    );
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer', what);
    assert.equal(response.headers.get('x-frame-options'), 'DENY', what);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff', what);
    if (status === 413) assert.match(html, /Request body is larger than 16 KB/, what);
  }
});
