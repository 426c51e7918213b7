// Shared by the email read/manage/retry/forward/retention tests: sending through the API and
// putting emails into states the delivery worker would (this tests reads, not delivery).
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import assert from 'node:assert/strict';
import type { Updateable } from 'kysely';
import type { TestApp, ApiClient } from '../helpers/app.ts';
import { newId, randomAlphanumeric } from '../../src/platform/ids.ts';
import { nowIso } from '../../src/platform/clock.ts';
import type { EmailsTable } from '../../src/resources/emails/tables.ts';

export async function send(api: ApiClient, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await api.post('/v2/emails', { from: 'Acme <hello@acme.test>', subject: 'Hello', text: 'Hi there', ...body }, headers);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

export async function setEmail(app: TestApp, id: string, values: Updateable<EmailsTable>) {
  await app.running.ctx.db.updateTable('emails').set(values).where('id', '=', id).execute();
}

export async function emailRow(app: TestApp, id: string) {
  return app.running.ctx.db.selectFrom('emails').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function contentOf(app: TestApp, id: string) {
  const row = await emailRow(app, id);
  return app.running.ctx.db.selectFrom('email_contents').selectAll().where('id', '=', row.content_id).executeTakeFirstOrThrow();
}

export async function credits(app: TestApp, workspaceId = app.workspace.id) {
  const row = await app.running.ctx.db.selectFrom('workspaces').select('credits').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  return Number(row.credits);
}

export async function eventsFor(app: TestApp, id: string) {
  const rows = await app.running.ctx.db.selectFrom('events').selectAll().orderBy('seq').execute();
  return rows.filter((e) => JSON.parse(e.data).id === id).map((e) => ({ type: e.type, object: JSON.parse(e.data) }));
}

export async function deliverJobs(app: TestApp, id: string) {
  return app.running.ctx.db
    .selectFrom('jobs')
    .selectAll()
    .where('type', '=', 'email.deliver')
    .where('payload', '=', `{"email_id":"${id}"}`)
    .execute();
}

/** An inbound email as the inbound listener stores it: raw MIME kept, status received. */
export async function insertInbound(
  app: TestApp,
  values: { to: string; from: string; subject: string; raw: string; workspaceId?: string },
) {
  const db = app.running.ctx.db;
  const now = nowIso();
  const contentId = newId('emc');
  const message = {
    from: { address: values.from, name: '' },
    to: [{ address: values.to, name: '' }],
    cc: [],
    bcc: [],
    reply_to: [],
    subject: values.subject,
    html: null,
    text: 'inbound body',
    headers: {},
    attachments: [],
  };
  await db
    .insertInto('email_contents')
    .values({
      id: contentId,
      workspace_id: values.workspaceId ?? app.workspace.id,
      message: JSON.stringify(message),
      raw: values.raw,
      size: values.raw.length,
      created_at: now,
      purged_at: null,
    })
    .execute();
  const token = randomAlphanumeric(32);
  const id = newId('em');
  await db
    .insertInto('emails')
    .values({
      id,
      workspace_id: values.workspaceId ?? app.workspace.id,
      type: 'inbound',
      source: 'inbound',
      token,
      message_id: `<${token}@inbound.acme.test>`,
      content_id: contentId,
      from: values.from,
      from_address: values.from,
      to: values.to,
      recipient_kind: 'to',
      subject: values.subject,
      status: 'received',
      scheduled_at: null,
      api_key_id: null,
      sending_domain_id: null,
      tag: null,
      spam_score: 1.5,
      size: values.raw.length,
      meta: null,
      track_loads: 0,
      track_clicks: 0,
      original_id: null,
      status_detail: null,
      delivered_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

export const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const DAY_MS = 86_400_000;

/** The app these tests share: API only (no worker moves emails), a verified acme.test (and
 *  any `more` domains), and the per-second limit lifted so tests can send freely. */
export async function startEmailsApp(...more: string[]): Promise<SendingApp> {
  const app = await startSendingApp({ roles: ['api'] });
  for (const name of ['acme.test', ...more]) await app.verifiedDomain(name);
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1000 });
  return app;
}
