// Hosted subscribe links: 30 requests per minute per IP (https://emailit.com/docs/limits.md),
// shared by POST /v1/audiences/subscribe/:token and the hosted pages. In a file of its own: the
// limiter belongs to the process and every request from this test comes from 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { SUBSCRIBE_LINKS_PER_MINUTE } from '../../src/resources/audiences/rate-limits.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

test('the 31st subscribe request in a minute from one IP is 429 with retry-after, on the API call and the hosted page alike', async () => {
  assert.equal(SUBSCRIBE_LINKS_PER_MINUTE, 30);
  const audience = (await app.api.post('/v2/audiences', { name: 'Popular', visibility: 'public' })).body;
  const visitor = app.as(null);
  for (let i = 0; i < 30; i++) {
    const res = await visitor.post(`/v1/audiences/subscribe/${audience.token}`, { email: `fan${i}@example.com` });
    assert.equal(res.status, 201, `request ${i + 1}: ${res.text}`);
  }
  const refused = await visitor.post(`/v1/audiences/subscribe/${audience.token}`, { email: 'fan30@example.com' });
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error, 'Rate limit exceeded');
  assert.equal(refused.body.limit, 30);
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  assert.equal((await app.api.get('/v2/contacts/fan30%40example.com')).status, 404, 'nothing done');

  const hosted = await fetch(`${app.url}/subscribe/${audience.token}`);
  assert.equal(hosted.status, 429);
  assert.match(await hosted.text(), /Too many requests/);
  assert.equal((await app.api.get(`/v2/audiences/${audience.id}`)).body.subscribers_count, 30);
  // The authenticated API is not limited by the public links' counter.
  assert.equal((await app.api.post(`/v2/audiences/${audience.id}/subscribers`, { email: 'api@example.com' })).status, 201);
});
