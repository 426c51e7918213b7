// Fills a running Postlane (an earlier release, started by make-fixture.ts) with data through
// its public API, as users would: a verified domain, keys, people, emails in many states,
// contacts, audiences, campaigns, forms, automations, verifications, DMARC reports, webhooks.
// Only the public HTTP API is used, never the release's own modules, so the same seeder works
// on any release; a step the release does not support is reported and skipped (the tables it
// would have filled are then filled in SQL by fill-gaps.ts, and the script says which).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import nodemailer from 'nodemailer';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { TestDnsServer } from '../../src/dev/dns-server.ts';
import type { SmtpSink } from '../../src/dev/smtp-sink.ts';

export interface SeedTarget {
  url: string;
  key: string;
  workspaceId: string;
  dns: TestDnsServer;
  sink: SmtpSink;
  inboundPort: number;
  submissionPort: number;
  webhookUrl: string;
  /** Runs the release's CLI (`postlane ARGS`), returning its stdout. */
  cli(args: string[]): Promise<string>;
}

/** What the upgrade test reads back after the upgrade (ids, and the secrets it needs). */
export interface SeededObjects {
  api_key: string;
  sending_key?: string;
  ids: Record<string, string>;
  /** Objects as the release's API showed them at the end, to compare after the upgrade. */
  objects: Record<string, any>;
  skipped: string[];
}

const DOMAIN = 'acme.test';
const RECIPIENTS = 'example.org';
const DMARC_XML = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'dmarc', 'google-aggregate.xml'));

type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<any>;

function client(url: string, key: string | null): Call {
  return async (method, path, body, headers = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : null;
  };
}

async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function seedThroughApi(target: SeedTarget, log: (line: string) => void): Promise<SeededObjects> {
  const api = client(target.url, target.key);
  const anonymous = client(target.url, null);
  const ids: Record<string, string> = {};
  const skipped: string[] = [];
  const objects: Record<string, any> = {};
  const out: SeededObjects = { api_key: target.key, ids, objects, skipped };
  const step = async (name: string, run: () => Promise<void>) => {
    try {
      await run();
      log(`  ok    ${name}`);
    } catch (error) {
      skipped.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      log(`  SKIP  ${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const emailStatus = (id: string, statuses: string[]) =>
    until(`${id} to be ${statuses.join(' or ')}`, async () => {
      const email = await api('GET', `/v2/emails/${id}`);
      return statuses.includes(email.status) && email;
    });

  // The recipients' side of the "internet": example.org's MX is the sink.
  target.dns.set(RECIPIENTS, 'MX', [{ exchange: `mx.${RECIPIENTS}`, priority: 10 }]);
  target.dns.set(`mx.${RECIPIENTS}`, 'A', ['127.0.0.1']);
  target.dns.set('held.example', 'MX', [{ exchange: `mx.${RECIPIENTS}`, priority: 10 }]);

  await step('domain, DNS records published and verified', async () => {
    const domain = await api('POST', '/v2/domains', { name: DOMAIN, dmarc_reports: true });
    ids.domain = domain.id;
    for (const record of domain.dns_records as Array<{ type: string; name: string; value: string; priority: number | null }>) {
      if (record.type === 'MX') target.dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
      else if (record.type === 'CNAME') target.dns.set(record.name, 'CNAME', [record.value]);
      else target.dns.set(record.name, 'TXT', [record.value]);
    }
    await api('POST', `/v2/domains/${domain.id}/verify`);
    const verified = await api('GET', `/v2/domains/${domain.id}`);
    if (!verified.verified_at) throw new Error(`the domain did not verify: ${JSON.stringify(verified).slice(0, 300)}`);
    await api('PATCH', `/v2/domains/${domain.id}`, { track_loads: true, track_clicks: true }).catch(() => {});
  });

  await step('a second API key (sending scope)', async () => {
    const key = await api('POST', '/v2/api-keys', { name: 'Fixture sending key', scope: 'sending' });
    ids.api_key = key.id;
    out.sending_key = key.key;
  });

  await step('people: an invitation, an accepted invitation, a session', async () => {
    const pending = await api('POST', '/v2/invitations', { email: 'pending@example.org', role: 'member' });
    ids.invitation = pending.id;
    const accepted = await api('POST', '/v2/invitations', { email: 'member@example.org', role: 'admin' });
    const token = new URL(accepted.url).hash.slice(1);
    await anonymous('POST', `/auth/invitations/${token}/accept`, { password: 'fixture-password-1' }, { origin: target.url });
    await anonymous('POST', '/auth/sign-in', { email: 'member@example.org', password: 'fixture-password-1' }, { origin: target.url });
  });

  await step('template, published', async () => {
    const template = await api('POST', '/v2/templates', {
      name: 'Welcome',
      alias: 'welcome',
      subject: 'Welcome {{name}}',
      html: '<p>Hello {{name}}</p>',
      text: 'Hello {{name}}',
    });
    ids.template = template.data?.id ?? template.id;
    await api('POST', `/v2/templates/${ids.template}/publish`).catch(() => {});
  });

  await step('suppression', async () => {
    const suppression = await api('POST', '/v2/suppressions', { email: `suppressed@${RECIPIENTS}`, reason: 'manual' });
    ids.suppression = suppression.data?.id ?? suppression.id;
  });

  await step('webhook for every event', async () => {
    const webhook = await api('POST', '/v2/webhooks', { name: 'Fixture receiver', url: target.webhookUrl, all_events: true });
    ids.webhook = webhook.data?.id ?? webhook.id;
  });

  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    api(
      'POST',
      '/v2/emails',
      {
        from: `Acme <hello@${DOMAIN}>`,
        subject: 'Fixture',
        html: '<p>Hello <a href="https://example.org/page">a link</a></p>',
        text: 'Hello',
        ...body,
      },
      headers,
    );

  await step('email delivered (attachment, idempotency key, tracked)', async () => {
    const email = await send(
      {
        to: `alice@${RECIPIENTS}`,
        subject: 'Delivered',
        attachments: [{ filename: 'hello.txt', content: Buffer.from('hello\n').toString('base64'), content_type: 'text/plain' }],
        tags: ['fixture'],
        meta: { order: '42' },
      },
      { 'idempotency-key': 'fixture-delivered-1' },
    );
    ids.email = email.id;
    await emailStatus(email.id, ['delivered']);
  });

  await step('email opened and clicked (tracking pixel and link)', async () => {
    const message = target.sink.messages.find((m) => m.rcptTo.includes(`alice@${RECIPIENTS}`));
    if (!message) throw new Error('the delivered message did not reach the sink');
    const raw = message.raw.toString('utf8').replace(/=\r\n/g, '').replace(/=3D/g, '=');
    const links = [...raw.matchAll(/https?:\/\/[^\s"'<>]+/g)]
      .map((m) => m[0])
      .filter((u) => u.includes('/t/') || u.includes('track') || u.includes('/o/') || u.includes('/c/'));
    if (links.length === 0) throw new Error('no tracking link in the message');
    for (const link of links) {
      const local = new URL(link);
      await fetch(`${target.url}${local.pathname}${local.search}`, { redirect: 'manual' });
    }
  });

  await step('email bounced', async () => {
    const email = await send({ to: `bounce@${RECIPIENTS}`, subject: 'Bounced' });
    ids.email_bounced = email.id;
    await emailStatus(email.id, ['bounced']);
  });

  await step('email deferred (attempted)', async () => {
    const email = await send({ to: `later@${RECIPIENTS}`, subject: 'Deferred' });
    ids.email_attempted = email.id;
    await emailStatus(email.id, ['attempted']);
  });

  await step('email suppressed', async () => {
    const email = await send({ to: `suppressed@${RECIPIENTS}`, subject: 'Suppressed' });
    ids.email_suppressed = email.id;
    await emailStatus(email.id, ['suppressed']);
  });

  await step('email scheduled, and one canceled', async () => {
    const at = new Date(Date.now() + 300 * 86_400_000).toISOString();
    const scheduled = await send({ to: `later-on@${RECIPIENTS}`, subject: 'Scheduled', scheduled_at: at });
    ids.email_scheduled = scheduled.id;
    const canceled = await send({ to: `never@${RECIPIENTS}`, subject: 'Canceled', scheduled_at: at });
    await api('POST', `/v2/emails/${canceled.id}/cancel`);
    ids.email_canceled = canceled.id;
  });

  await step('email from a template', async () => {
    const email = await send({
      to: `templated@${RECIPIENTS}`,
      template: 'welcome',
      variables: { name: 'Ann' },
      html: undefined,
      text: undefined,
      subject: undefined,
    });
    ids.email_templated = email.id;
    await emailStatus(email.id, ['delivered']);
  });

  await step('email held (delivery hold through the CLI)', async () => {
    await target.cli(['delivery', 'hold', '--workspace', target.workspaceId, '--domain', 'held.example', '--reason', 'fixture', '--json']);
    const email = await send({ to: `someone@held.example`, subject: 'Held' });
    ids.email_held = email.id;
    await emailStatus(email.id, ['held', 'accepted']);
  });

  await step('email over the SMTP relay (AUTH with the key)', async () => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: target.submissionPort,
      secure: false,
      requireTLS: true,
      auth: { user: 'fixture', pass: target.key },
      tls: { rejectUnauthorized: false },
    });
    try {
      await transport.sendMail({ from: `hello@${DOMAIN}`, to: `relay@${RECIPIENTS}`, subject: 'Over SMTP', text: 'Relayed' });
    } finally {
      transport.close();
    }
  });

  await step('email to a domain without mail servers (bounced or failed)', async () => {
    const email = await send({ to: `nobody@nowhere.example`, subject: 'Nowhere' });
    ids.email_undeliverable = email.id;
    await emailStatus(email.id, ['failed', 'bounced']);
  });

  const toInboundMx = async (from: string, to: string, raw: string) => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: target.inboundPort, secure: false, ignoreTLS: true });
    try {
      await transport.sendMail({ envelope: { from, to: [to] }, raw });
    } finally {
      transport.close();
    }
  };

  await step('email received by the inbound MX', async () => {
    const domain = await api('GET', `/v2/domains/${ids.domain}`);
    const to = `support@${domain.inbound_key ?? 'inbound'}.${DOMAIN}`;
    await toInboundMx(
      `customer@${RECIPIENTS}`,
      to,
      `From: customer@${RECIPIENTS}\r\nTo: ${to}\r\nSubject: A question\r\nMessage-ID: <q1@${RECIPIENTS}>\r\n\r\nHello?\r\n`,
    );
    // A 250 from the inbound MX means the email row (type inbound, status received) is stored.
  });

  await step('email complained (a feedback report to its return path)', async () => {
    const message = target.sink.messages.find((m) => m.rcptTo.includes(`templated@${RECIPIENTS}`));
    if (!message) throw new Error('the templated email did not reach the sink');
    const report = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'bounces', 'arf-abuse.eml'), 'utf8')
      .replaceAll('b+em_2gGEhhhhhhhhhhhhhhhhhhhhhhh.aaaaaaaaaaaaaaaa@postlane.acme.test', message.mailFrom)
      .replaceAll('Heidi@Mailbox.example', `templated@${RECIPIENTS}`)
      .replace(/\r?\n/g, '\r\n');
    await toInboundMx('', message.mailFrom, report);
    await emailStatus(ids.email_templated, ['complained']);
  });

  await step('custom field', async () => {
    const field = await api('POST', '/v2/custom-fields', { key: 'plan', label: 'Plan', type: 'text' });
    ids.custom_field = field.data?.id ?? field.id;
  });

  await step('contacts, an audience and its subscribers', async () => {
    const contact = await api('POST', '/v2/contacts', {
      email: `carol@${RECIPIENTS}`,
      first_name: 'Carol',
      last_name: 'Jones',
      custom_fields: { plan: 'gold' },
    });
    ids.contact = contact.data?.id ?? contact.id;
    await api('POST', '/v2/contacts', { email: `dave@${RECIPIENTS}`, first_name: 'Dave' });
    const audience = await api('POST', '/v2/audiences', { name: 'Newsletter' });
    ids.audience = audience.data?.id ?? audience.id;
    await api('POST', `/v2/audiences/${ids.audience}/subscribers`, { email: `carol@${RECIPIENTS}` });
    await api('POST', `/v2/audiences/${ids.audience}/subscribers`, { email: `dave@${RECIPIENTS}` });
    const doubleOptIn = await api('POST', '/v2/audiences', {
      name: 'Confirmed list',
      double_opt_in: { enabled: true, email: { from: `news@${DOMAIN}` } },
    });
    await api('POST', `/v2/audiences/${doubleOptIn.id ?? doubleOptIn.data?.id}/subscribers`, {
      email: `erin@${RECIPIENTS}`,
      double_opt_in: true,
    });
  });

  await step('automation on contact updates with a cooldown, run by an update', async () => {
    const created = await api('POST', '/v2/automations', {
      context: 'contact',
      name: 'On update',
      settings: { cooldown_seconds: 3600 },
      steps: [
        { key: 'updated', type: 'trigger', trigger: 'contact.updated' },
        { key: 'end', type: 'action', action: 'end' },
      ],
      connections: [{ from: 'updated', to: 'end' }],
    });
    const automation = created.data ?? created;
    ids.automation_on_update = automation.id;
    await api('POST', `/v2/automations/${automation.id}/start`);
    await api('POST', `/v2/contacts/${ids.contact}`, { last_name: 'Smith' }).catch(() =>
      api('PATCH', `/v2/contacts/${ids.contact}`, { last_name: 'Smith' }),
    );
    await until(
      'a run of the update automation',
      async () => ((await api('GET', `/v2/automations/${automation.id}/runs`)).data?.length ?? 0) > 0,
    );
  });

  await step('email forwarded', async () => {
    await api('POST', `/v2/emails/${ids.email}/forward`, { to: `forward@${RECIPIENTS}` });
  });

  await step('campaign sent to the audience, and a draft', async () => {
    const campaign = await api('POST', '/v2/campaigns', {
      name: 'Spring news',
      subject: 'Hi {{first_name}}',
      from_email: `news@${DOMAIN}`,
      from_name: 'Acme News',
      html: '<p>Hello {{first_name}}</p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>',
      text: 'Hello. {{unsubscribe_url}}',
    });
    ids.campaign = campaign.id;
    await api('POST', `/v2/campaigns/${campaign.id}`, { recipients: [{ audience_id: ids.audience }] });
    await api('POST', `/v2/campaigns/${campaign.id}/send`);
    await until('the campaign to be sent', async () =>
      ['sent', 'completed'].includes((await api('GET', `/v2/campaigns/${campaign.id}`)).status),
    );
    const draft = await api('POST', '/v2/campaigns', { name: 'Draft', subject: 'Later', html: '<p>Later</p>' });
    ids.campaign_draft = draft.id;
  });

  await step('form published and submitted', async () => {
    const form = await api('POST', '/v2/forms', { name: 'Newsletter sign-up' });
    ids.form = form.id;
    const live = await api('POST', `/v2/forms/${form.id}/publish`);
    const loaded = await anonymous('GET', `/v2/forms/${live.token}`);
    const solution = await solveChallenge({ challenge: loaded.challenge as never, deriveKey });
    if (!solution) throw new Error('could not solve the form challenge');
    await anonymous('POST', `/v2/forms/${live.token}/submit`, {
      fields: { email: `frank@${RECIPIENTS}` },
      proof: { challenge: loaded.challenge, solution: { counter: solution.counter, derivedKey: solution.derivedKey } },
    });
    await api('GET', '/v2/forms/embed');
  });

  await step('automation, triggered by hand, waiting', async () => {
    const created = await api('POST', '/v2/automations', {
      context: 'event',
      name: 'Follow-up',
      steps: [
        { key: 'start', type: 'trigger', trigger: 'system.manual' },
        { key: 'wait', type: 'action', action: 'wait', config: { seconds: 3600 } },
      ],
      connections: [{ from: 'start', to: 'wait' }],
    });
    const automation = created.data ?? created;
    ids.automation = automation.id;
    await api('POST', `/v2/automations/${automation.id}/start`);
    await api('POST', `/v2/automations/${automation.id}/trigger`, { payload: { note: 'fixture' } });
    await until('an automation run', async () => ((await api('GET', `/v2/automations/${automation.id}/runs`)).data?.length ?? 0) > 0);
  });

  await step('email verification and a verification list', async () => {
    await api('POST', '/v2/email-verifications', { email: `alice@${RECIPIENTS}` });
    const list = await api('POST', '/v2/email-verification-lists', {
      name: 'Fixture list',
      emails: [`alice@${RECIPIENTS}`, `bob@${RECIPIENTS}`],
    });
    ids.verification_list = list.id ?? list.data?.id;
    await until(
      'the verification list to finish',
      async () => (await api('GET', `/v2/email-verification-lists/${ids.verification_list}`)).status === 'completed',
      60_000,
    );
  });

  await step('DMARC aggregate report', async () => {
    await api('POST', `/v2/domains/${DOMAIN}/dmarc/reports`, {
      content: gzipSync(DMARC_XML).toString('base64'),
      filename: 'google.com!acme.test!1767225600!1767311999.xml.gz',
    });
  });

  await step('webhook deliveries settled', async () => {
    await until('a webhook request', async () => ((await api('GET', `/v2/webhooks/${ids.webhook}/requests`)).data?.length ?? 0) > 0);
  });

  // The objects the upgrade test reads back, as this release shows them.
  const read: Record<string, string> = {
    email: `/v2/emails/${ids.email}`,
    email_scheduled: `/v2/emails/${ids.email_scheduled}`,
    contact: `/v2/contacts/${ids.contact}`,
    campaign: `/v2/campaigns/${ids.campaign}`,
    webhook: `/v2/webhooks/${ids.webhook}`,
    domain: `/v2/domains/${ids.domain}`,
    audience: `/v2/audiences/${ids.audience}`,
    template: `/v2/templates/${ids.template}`,
  };
  for (const [name, path] of Object.entries(read)) {
    await step(`read back ${name}`, async () => {
      const body = await api('GET', path);
      objects[name] = body?.data && !body.id ? body.data : body;
    });
  }
  return out;
}
