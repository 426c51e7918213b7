// The service layer campaigns and automations call: contacts and memberships in the caller's
// transaction, their events (https://emailit.com/docs/webhooks/event-types.md), the plan cap,
// unsubscribe, the recipients query. HTTP behaviour is tested in api.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshMigratedDb, apiErrorOf } from '../helpers/app.ts';
import type { Db } from '../../src/platform/db/database.ts';
import { createWorkspace, updateWorkspace } from '../../src/resources/workspaces/service.ts';
import {
  createContact,
  deleteContact,
  findContact,
  findOrCreateContact,
  requireContact,
  unsubscribeContact,
  updateContact,
} from '../../src/resources/contacts/service.ts';
import { eligibleRecipients } from '../../src/resources/campaigns/snapshot.ts';
import {
  addSubscriber,
  createAudience,
  subscribeContact,
  removeContactFromAudience,
  deleteAudience,
} from '../../src/resources/audiences/service.ts';
import { checkEventPayload } from '../../src/resources/events/payloads.ts';

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

before(async () => {
  ({ db, close } = await freshMigratedDb());
  workspaceId = (await createWorkspace(db, { name: 'svc', plan: 'pro' })).workspace.id;
});
after(() => close());

async function eventsSince(seq: number) {
  const rows = await db.selectFrom('events').selectAll().where('seq', '>', seq).orderBy('seq').execute();
  return rows.map((r) => ({ type: r.type, object: JSON.parse(r.data) }));
}
async function lastSeq() {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

test('create with audiences: contact.created lists them, then subscriber.created per audience; payloads conform', async () => {
  const [news, offers] = await db
    .transaction()
    .execute(async (tx) => [
      await createAudience(tx, workspaceId, { name: 'News' }),
      await createAudience(tx, workspaceId, { name: 'Offers' }),
    ]);
  const seq = await lastSeq();
  const { contact, memberships } = await db
    .transaction()
    .execute((tx) =>
      createContact(tx, workspaceId, { email: ' Jane@Example.COM ', first_name: 'Jane', audiences: [news.id, offers.id, 'aud_notmine'] }),
    );
  assert.equal(contact.email, 'jane@example.com');
  assert.deepEqual(
    memberships.map((m) => m.audience.name),
    ['News', 'Offers'],
  );
  const events = await eventsSince(seq);
  assert.deepEqual(
    events.map((e) => e.type),
    ['contact.created', 'subscriber.created', 'subscriber.created'],
  );
  for (const e of events) assert.deepEqual(checkEventPayload(e.type, e.object), [], e.type);
  assert.equal(events[0].object.audiences.length, 2);
  assert.equal(events[1].object.contact.email, 'jane@example.com');

  const conflict = await apiErrorOf(db.transaction().execute((tx) => createContact(tx, workspaceId, { email: 'JANE@example.com' })));
  assert.equal(conflict.status, 409);
  assert.equal((conflict.body.existing as any).id, contact.id);
});

test('the plan cap is one conditional update: the last place goes to one add, the next is 422 with usage', async () => {
  const ws = (await createWorkspace(db, { name: 'capped', plan: 'payg' })).workspace.id;
  const audience = await db.transaction().execute((tx) => createAudience(tx, ws, { name: 'Small' }));
  await db.updateTable('audiences').set({ subscriber_count: 9_999 }).where('id', '=', audience.id).execute();
  await db.transaction().execute((tx) => addSubscriber(tx, ws, audience, { email: 'last@example.com' }));
  const error = await apiErrorOf(
    db.transaction().execute((tx) => createContact(tx, ws, { email: 'over@example.com', audiences: [audience.id] })),
  );
  assert.equal(error.status, 422);
  assert.deepEqual(error.body.usage, { used: 10_000, limit: 10_000, plan: 'Pay as you go' });
  assert.equal(await findContact(db, ws, 'over@example.com'), undefined, 'nothing created');
  await updateWorkspace(db, ws, { plan: 'custom' });
  await db.transaction().execute((tx) => createContact(tx, ws, { email: 'over@example.com', audiences: [audience.id] }));
});

test('update emits previous of changed fields only; unsubscribe turns off the campaign audiences; recipients skip both', async () => {
  const audience = await db.transaction().execute((tx) => createAudience(tx, workspaceId, { name: 'Campaign list' }));
  const other = await db.transaction().execute((tx) => createAudience(tx, workspaceId, { name: 'Other list' }));
  const a = await db
    .transaction()
    .execute(async (tx) => (await findOrCreateContact(tx, workspaceId, { email: 'a@example.com', first_name: 'A' })).contact);
  const b = await db.transaction().execute(async (tx) => (await findOrCreateContact(tx, workspaceId, { email: 'b@example.com' })).contact);
  for (const c of [a, b]) {
    await db.transaction().execute(async (tx) => {
      await subscribeContact(tx, workspaceId, audience, c);
      await subscribeContact(tx, workspaceId, other, c);
    });
  }
  const seq = await lastSeq();
  await db.transaction().execute((tx) => updateContact(tx, workspaceId, a, { first_name: 'Ann', last_name: null }));
  const [updated] = await eventsSince(seq);
  assert.equal(updated.type, 'contact.updated');
  assert.deepEqual(updated.object.previous, { first_name: 'A' });

  // Who a campaign to both audiences would reach: each subscribed contact once.
  const emailOf = new Map([
    [a.id, a.email],
    [b.id, b.email],
  ]);
  const recipients = async () =>
    (await eligibleRecipients(db, workspaceId, [audience.id, other.id]).distinct().execute()).map((r) => emailOf.get(r.contact_id));
  assert.deepEqual((await recipients()).sort(), ['a@example.com', 'b@example.com']);

  const seq2 = await lastSeq();
  await db.transaction().execute((tx) => unsubscribeContact(tx, workspaceId, b.id, { audienceIds: [audience.id] }));
  const types = (await eventsSince(seq2)).map((e) => e.type);
  assert.deepEqual(types, ['contact.updated', 'subscriber.updated']);
  assert.deepEqual(await recipients(), ['a@example.com']);
  const again = await lastSeq();
  await db.transaction().execute((tx) => unsubscribeContact(tx, workspaceId, b.id, { audienceIds: [audience.id] }));
  assert.equal(await lastSeq(), again, 'a second unsubscribe changes nothing');

  await db.transaction().execute((tx) => removeContactFromAudience(tx, workspaceId, other, a));
  const refreshed = await db.selectFrom('audiences').select('subscriber_count').where('id', '=', other.id).executeTakeFirstOrThrow();
  assert.equal(refreshed.subscriber_count, 1);

  const seq3 = await lastSeq();
  await db.transaction().execute(async (tx) => deleteContact(tx, workspaceId, await requireContact(tx, workspaceId, 'a@example.com')));
  assert.deepEqual(
    (await eventsSince(seq3)).map((e) => e.type),
    ['subscriber.deleted', 'contact.deleted'],
  );
  await db.transaction().execute((tx) => deleteAudience(tx, workspaceId, audience));
  assert.equal((await db.selectFrom('subscribers').select('id').where('audience_id', '=', audience.id).execute()).length, 0);
  assert.ok(await findContact(db, workspaceId, 'b@example.com'), 'contacts stay');
});
