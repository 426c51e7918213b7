// Authenticated GET /v2/api-keys/{id} against a bare Fastify route answering the same JSON.
import { join } from 'node:path';
import type { Scenario } from '../run.ts';
import { describeLoad, freePort, load, startChild, startPostlane } from '../lib.ts';

export const scenario: Scenario = {
  name: 'api-key-get',
  description: 'authenticated GET /v2/api-keys/{id} vs a bare Fastify route with the same JSON (aim: ratio >= 0.6)',
  async run({ seconds, connections }) {
    const postlane = await startPostlane();
    try {
      const headers = { authorization: `Bearer ${postlane.key}` };
      const list = await (await fetch(`${postlane.url}/v2/api-keys`, { headers })).json();
      const id = list.data[0].id;
      const path = `/v2/api-keys/${id}`;
      const body = await (await fetch(postlane.url + path, { headers })).text();

      const port = await freePort();
      const baseline = await startChild(
        join(import.meta.dirname, '..', 'baseline-fastify.ts'),
        [],
        { BASELINE_BODY: body, BASELINE_PORT: String(port) },
        port,
        '/healthz',
      );
      try {
        // Warm both up (JIT, caches) before measuring.
        await load(postlane.url + path, { seconds: 2, connections, headers });
        await load(baseline.url + path, { seconds: 2, connections });
        const ours = await load(postlane.url + path, { seconds, connections, headers });
        const bare = await load(baseline.url + path, { seconds, connections });
        return {
          name: this.name,
          lines: [
            describeLoad('postlane GET /v2/api-keys/{id}', ours),
            describeLoad('bare fastify, same JSON', bare),
            `ratio (postlane / bare): ${(ours.requestsPerSecond / bare.requestsPerSecond).toFixed(2)}`,
          ],
        };
      } finally {
        await baseline.stop();
      }
    } finally {
      await postlane.stop();
    }
  },
};
