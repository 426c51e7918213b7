// Real mail for the overview's figures, shared by the API test and the dashboard test: three API
// sends (Gmail, example.org, and bounce@example.org which the sink refuses with a 550), one to a
// suppressed address (never sent, so not counted), and a two-recipient campaign with a tracked
// link that one recipient clicks and the other opens. Expected figures: sent 5, delivered 4,
// bounced 1 (hard), opened 2, clicked 1; Gmail 1, others 4.
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { eventually, type ApiClient } from '../helpers/app.ts';
import type { TestDnsServer } from '../helpers/dns-server.ts';
import type { SmtpSink } from '../helpers/smtp-sink.ts';

export const OFFER_URL = 'https://shop.example.com/offer';

export interface Seeded {
  gmail: string;
  delivered: string;
  bounced: string;
  campaign: string;
  clicker: string;
}

async function waitForStatus(api: ApiClient, id: string, status: string) {
  return eventually(async () => {
    const res = await api.get(`/v2/emails/${id}`);
    return res.body.status === status && res.body;
  }, 20_000);
}

export async function seedMail(
  env: { api: ApiClient; url: string; dns: TestDnsServer; sink: SmtpSink },
  from = 'hello@acme.test',
): Promise<Seeded> {
  const { api, url, dns, sink } = env;
  dns.set('gmail.com', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  const send = async (to: string) => {
    let res = await api.post('/v2/emails', { from, to, subject: `For ${to}`, text: 'Hello', tracking: { loads: false, clicks: false } });
    // A new workspace sends 2 a second: wait as the answer says.
    for (let i = 0; res.status === 429 && i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(res.body.retry_after ?? 1)));
      res = await api.post('/v2/emails', { from, to, subject: `For ${to}`, text: 'Hello', tracking: { loads: false, clicks: false } });
    }
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  assert.equal((await api.post('/v2/suppressions', { email: 'gone@example.org' })).status, 201);
  const gmail = await send('reader@gmail.com');
  const delivered = await send('bob@example.org');
  const bounced = await send('bounce@example.org');
  await send('gone@example.org');
  await waitForStatus(api, gmail, 'delivered');
  await waitForStatus(api, delivered, 'delivered');
  await waitForStatus(api, bounced, 'bounced');

  const audience = (await api.post('/v2/audiences', { name: 'Insight readers' })).body.id;
  for (const email of ['click@example.org', 'open@example.org']) {
    assert.equal((await api.post('/v2/contacts', { email, audiences: [audience] })).status, 201);
  }
  const created = await api.post('/v2/campaigns', {
    name: 'Spring offer',
    from_email: from,
    from_name: 'Acme',
    subject: 'The spring offer',
    html: `<p>Hi, <a href="${OFFER_URL}">see the offer</a></p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>`,
    text: 'See the offer. Unsubscribe: {{unsubscribe_url}}',
  });
  assert.equal(created.status, 201, created.text);
  const campaign = created.body.id as string;
  assert.equal((await api.post(`/v2/campaigns/${campaign}`, { recipients: [{ audience_id: audience }] })).status, 200);
  assert.equal((await api.post(`/v2/campaigns/${campaign}/send`, {})).status, 200);
  const html = async (to: string) => {
    const message = await eventually(async () => sink.messages.find((m) => m.rcptTo[0] === to), 30_000);
    return String((await simpleParser(message.raw)).html);
  };
  // The tracking host's CNAME points at the server: any Host is answered, so the app's own address will do.
  const click = /href="http:\/\/[^/"]+(\/c\/[^"]+)"/.exec(await html('click@example.org'))![1];
  const pixel = /src="http:\/\/[^/"]+(\/o\/[^"]+)"/.exec(await html('open@example.org'))![1];
  const followed = await fetch(`${url}${click}`, { redirect: 'manual' });
  assert.equal(followed.status, 302);
  assert.equal(followed.headers.get('location'), OFFER_URL);
  assert.equal((await fetch(`${url}${pixel}`)).status, 200);
  const emails = await eventually(async () => {
    const list = (await api.get('/v2/emails?limit=100')).body.data as Array<{ id: string; to: string; status: string }>;
    const clicker = list.find((e) => e.to === 'click@example.org');
    const opener = list.find((e) => e.to === 'open@example.org');
    return clicker?.status === 'clicked' && opener?.status === 'loaded' && { clicker: clicker.id };
  }, 20_000);
  return { gmail, delivered, bounced, campaign, clicker: emails.clicker };
}
