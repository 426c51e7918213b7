// A Postlane with its inbound MX on a loopback port, and the DMARC report fixtures delivered to
// a domain's report address over real SMTP, as a receiver's mail server would.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { eventually, freePort, startTestApp, type ApiClient, type TestApp } from '../helpers/app.ts';

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'dmarc');
export const fixture = (name: string) => readFileSync(join(FIXTURES, name));

export interface DmarcApp extends TestApp {
  inboundPort: number;
}

export async function startDmarcApp(): Promise<DmarcApp> {
  const inboundPort = await freePort();
  const app = await startTestApp({ env: { SMTP_INBOUND_PORT: String(inboundPort), MAIL_HOSTNAME: 'mail.postlane.test' } });
  return Object.assign(app, { inboundPort });
}

/** Creates `name` with report collection on; returns the domain object. */
export async function collectingDomain(api: ApiClient, name: string): Promise<{ id: string; name: string; dmarc_address: string }> {
  const created = await api.post('/v2/domains', { name, dmarc_reports: true });
  assert.equal(created.status, 201, created.text);
  assert.match(created.body.dmarc_address, /^dmarc-[0-9a-f]{16}@mail\.postlane\.test$/);
  return created.body;
}

export interface Delivery {
  ok: boolean;
  code: number;
  response: string;
}

/** Delivers a raw message to `to` at the inbound MX, as a remote MTA would (no AUTH, no TLS). */
export async function deliver(port: number, to: string, raw: Buffer | string, from = 'reports@reporter.example'): Promise<Delivery> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    connectionTimeout: 5000,
    greetingTimeout: 5000,
  });
  try {
    const info = await transport.sendMail({ envelope: { from, to: [to] }, raw });
    return { ok: true, code: Number(String(info.response).slice(0, 3)), response: String(info.response) };
  } catch (error) {
    const e = error as { responseCode?: number; response?: string; message: string };
    return { ok: false, code: e.responseCode ?? 0, response: e.response ?? e.message };
  } finally {
    transport.close();
  }
}

/** Waits until the domain's list shows `count` reports and none pending; returns them. */
export async function settledReports(api: ApiClient, domain: string, count: number): Promise<any[]> {
  return eventually(async () => {
    const list = await api.get(`/v2/domains/${domain}/dmarc/reports?limit=100`);
    assert.equal(list.status, 200, list.text);
    const data = list.body.data as any[];
    return data.length === count && data.every((r) => r.status !== 'pending') && data;
  });
}
