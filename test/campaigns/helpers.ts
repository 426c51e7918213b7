// Campaign tests deliver to a real SMTP sink: example.org's MX is the sink, acme.test a verified
// domain; links point at PUBLIC_URL https://postlane.test (so the one-click header is offered),
// and tests post them to the app's own address.
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { eventually, type ApiClient } from '../helpers/app.ts';

export const PUBLIC_URL = 'https://postlane.test';

export async function startCampaignApp(options: Parameters<typeof startDeliveryApp>[0] = {}): Promise<DeliveryApp> {
  return startDeliveryApp({ ...options, env: { PUBLIC_URL, ...options.env } });
}

export async function audience(api: ApiClient, name: string): Promise<string> {
  const res = await api.post('/v2/audiences', { name });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

export async function contact(api: ApiClient, body: Record<string, unknown>): Promise<string> {
  const res = await api.post('/v2/contacts', body);
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

export const CONTENT = {
  subject: 'Hi {{first_name}}',
  html: '<p>Hello {{first_name}} {{last_name}} ({{email}}), plan {{cf.plan}}</p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>',
  text: 'Hello {{first_name}}. Unsubscribe: {{unsubscribe_url}}',
};

/** A campaign ready to send to `included` (and excluding `excluded`). */
export async function readyCampaign(
  api: ApiClient,
  included: string[],
  excluded: string[] = [],
  extra: Record<string, unknown> = {},
): Promise<string> {
  const created = await api.post('/v2/campaigns', {
    name: `c-${Math.random().toString(36).slice(2)}`,
    from_email: 'news@acme.test',
    from_name: 'Acme News',
    ...CONTENT,
    ...extra,
  });
  assert.equal(created.status, 201, created.text);
  const recipients = [
    ...included.map((audience_id) => ({ audience_id })),
    ...excluded.map((audience_id) => ({ audience_id, exclude: true })),
  ];
  const updated = await api.post(`/v2/campaigns/${created.body.id}`, { recipients });
  assert.equal(updated.status, 200, updated.text);
  return created.body.id;
}

export async function waitForCampaign(api: ApiClient, id: string, status: string, timeoutMs = 20_000) {
  return eventually(
    async () => {
      const res = await api.get(`/v2/campaigns/${id}`);
      return res.body.status === status && res.body;
    },
    timeoutMs,
    50,
  );
}

export async function report(api: ApiClient, id: string) {
  const res = await api.get(`/v2/campaigns/${id}/report`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}
