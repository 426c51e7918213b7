import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, apiClient } from './helpers/app.ts';

test('GET /healthz answers ok, /openapi.json describes the API, unknown routes are JSON 404s', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const anonymous = apiClient(app.url, null);

  const health = await anonymous.get('/healthz');
  assert.equal(health.status, 200);
  assert.deepEqual(health.body, { status: 'ok' });

  const openapi = await anonymous.get('/openapi.json');
  assert.equal(openapi.status, 200);
  assert.equal(openapi.body.openapi, '3.1.0');
  assert.ok(openapi.body.paths['/v2/api-keys'].post, 'the API keys routes are documented');
  assert.ok(openapi.body.paths['/v2/api-keys/{id}'].get);

  const missing = await app.api.get('/v2/no-such-thing');
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { statusCode: 404, error: 'Not Found', message: 'Route GET /v2/no-such-thing not found' });
});
