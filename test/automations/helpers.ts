// What the automation tests share: automations made and started over the API, runs polled
// until they settle.
import assert from 'node:assert/strict';
import { eventually, type ApiClient } from '../helpers/app.ts';

export async function startedAutomation(api: ApiClient, body: Record<string, unknown>) {
  const created = await api.post('/v2/automations', body);
  assert.equal(created.status, 201, created.text);
  const started = await api.post(`/v2/automations/${created.body.data.id}/start`);
  assert.equal(started.status, 200, started.text);
  return started.body.data as { id: string; steps: Array<{ id: string; key: string }>; [key: string]: any };
}

export async function allRuns(api: ApiClient, automationId: string, query = ''): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const response = await api.get(`/v2/automations/${automationId}/runs?per_page=100&page=${page}${query}`);
    assert.equal(response.status, 200, response.text);
    out.push(...response.body.data);
    if (page >= response.body.total_pages) return out;
  }
}

/** Waits until the automation has `count` runs, none of them running (unless `settled` is false). */
export async function settledRuns(api: ApiClient, automationId: string, count: number, timeoutMs = 15_000, settled = true): Promise<any[]> {
  return eventually(
    async () => {
      const runs = await allRuns(api, automationId);
      if (runs.length < count) return null;
      if (settled && runs.some((r) => r.status === 'running')) return null;
      return runs;
    },
    timeoutMs,
    100,
  );
}

export const manualGraph = (
  steps: Array<Record<string, unknown>>,
  connections: Array<Record<string, unknown>>,
  extra: Record<string, unknown> = {},
) => ({
  context: 'event',
  name: 'Manual',
  steps: [{ key: 'start', type: 'trigger', trigger: 'system.manual' }, ...steps],
  connections: steps.length > 0 ? [{ from: 'start', to: steps[0].key }, ...connections] : connections,
  ...extra,
});
