// The mailto half of List-Unsubscribe (a mail to the signed address unsubscribes its recipient,
// through the inbound listener), and the report's tracking figures: loads and clicks, unique
// per recipient, with the unsubscribe link itself left untracked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, freePort } from '../helpers/app.ts';
import type { DeliveryApp } from '../emails/delivery/helpers.ts';
import { submit } from '../smtp/helpers.ts';
import { audience, contact, readyCampaign, report, startCampaignApp, waitForCampaign } from './helpers.ts';

let app: DeliveryApp;
let inboundPort: number;
before(async () => {
  inboundPort = await freePort();
  app = await startCampaignApp({ env: { SMTP_INBOUND_PORT: String(inboundPort) } });
});
after(() => app.close());

const headerOf = (raw: Buffer, name: string) => {
  const head = raw
    .toString('utf8')
    .split('\r\n\r\n')[0]
    .replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}: (.*)$`, 'mi').exec(head)?.[1] ?? null;
};

test('mailto unsubscribe through the inbound listener; forged addresses refused; report counts loads and clicks (unique per recipient)', async () => {
  const api = app.api;
  const list = await audience(api, 'Mailto');
  const una = await contact(api, { email: 'mt-una@example.org', first_name: 'Una', audiences: [list] });
  const vic = await contact(api, { email: 'mt-vic@example.org', first_name: 'Vic', audiences: [list] });
  const id = await readyCampaign(api, [list], [], {
    html: '<p>Hi {{first_name}}, <a href="https://shop.example.com/offer">see the offer</a></p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>',
  });
  assert.equal((await api.post(`/v2/campaigns/${id}/send`)).status, 200);
  await waitForCampaign(api, id, 'sent');
  await eventually(async () => app.sink.messages.filter((m) => m.rcptTo[0].startsWith('mt-')).length === 2, 15_000);
  const messageTo = (address: string) => app.sink.messages.find((m) => m.rcptTo[0] === address)!;

  const header = headerOf(messageTo('mt-una@example.org').raw, 'List-Unsubscribe')!;
  const mailto = /<mailto:([^?>]+)(\?[^>]*)?>/.exec(header)?.[1];
  assert.ok(mailto, header);
  assert.match(mailto, /^b\+u-em_[A-Za-z0-9]{27}\.[0-9a-f]{16}@postlane\.acme\.test$/);

  const forged = await submit(
    { port: inboundPort, key: null, plain: true },
    { from: 'x@example.net', to: mailto.replace(/\.[0-9a-f]{16}@/, '.0000000000000000@'), subject: 'unsubscribe', text: 'unsubscribe' },
  );
  assert.equal(forged.ok, false);
  assert.equal(forged.code, 550);
  assert.equal((await api.get(`/v2/contacts/${una}`)).body.unsubscribed, false);

  const sent = await submit(
    { port: inboundPort, key: null, plain: true },
    { from: 'mt-una@example.org', to: mailto, subject: 'unsubscribe', text: '' },
  );
  assert.ok(sent.ok, sent.response);
  assert.equal((await api.get(`/v2/contacts/${una}`)).body.unsubscribed, true);
  assert.equal((await api.get(`/v2/contacts/${vic}`)).body.unsubscribed, false, 'only the recipient of that email');

  // Tracking: the offer link is tracked, the unsubscribe link is not.
  const html = (await app.parse(messageTo('mt-vic@example.org').raw)).html as string;
  const click = /href="http:\/\/[^/"]+(\/c\/[^"]+)"/.exec(html)?.[1];
  const pixel = /src="http:\/\/[^/"]+(\/o\/[^"]+)"/.exec(html)?.[1];
  assert.ok(click && pixel, html);
  assert.match(html, /href="https:\/\/postlane\.test\/unsubscribe\//, 'unsubscribe link untracked');
  for (let i = 0; i < 2; i++) {
    await fetch(`${app.url}${pixel}`, { headers: { 'user-agent': `reader ${i}` } });
    const res: Response = await fetch(`${app.url}${click}`, { redirect: 'manual', headers: { 'user-agent': `reader ${i}` } });
    assert.equal(res.status, 302);
  }
  const unaHtml = (await app.parse(messageTo('mt-una@example.org').raw)).html as string;
  const unaPixel = /src="http:\/\/[^/"]+(\/o\/[^"]+)"/.exec(unaHtml)![1];
  await fetch(`${app.url}${unaPixel}`);
  const figures = await eventually(async () => {
    const r = await report(api, id);
    return r.unique_loads === 2 && r.unique_clicks === 1 && r;
  });
  assert.ok(figures.loaded >= 2 && figures.clicked >= 1, JSON.stringify(figures));
  assert.equal(figures.unsubscribed, 1);
  assert.equal(figures.recipients, 2);
});
