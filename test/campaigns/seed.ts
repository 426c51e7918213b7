// Many contacts subscribed to one audience, written in bulk (tests and the bench scenario):
// `<prefix>-<n>@<domain>`, with a first name and a custom field for merge tags.
import type { Db } from '../../src/platform/db/database.ts';
import { newId } from '../../src/platform/ids.ts';
import { nowIso } from '../../src/platform/clock.ts';

export async function seedAudience(
  db: Db,
  workspaceId: string,
  audienceId: string,
  count: number,
  prefix: string,
  domain = 'example.org',
): Promise<void> {
  const now = nowIso();
  const chunk = 500;
  for (let start = 0; start < count; start += chunk * 20) {
    await db.transaction().execute(async (tx) => {
      for (let i = start; i < Math.min(count, start + chunk * 20); i += chunk) {
        const contacts = [];
        const subscribers = [];
        for (let n = i; n < Math.min(count, i + chunk); n++) {
          const id = newId('con');
          contacts.push({
            id,
            workspace_id: workspaceId,
            email: `${prefix}-${n}@${domain}`,
            first_name: `F${n}`,
            last_name: null,
            custom_fields: JSON.stringify({ n }),
            unsubscribed: 0,
            created_at: now,
            updated_at: now,
          });
          subscribers.push({
            id: newId('sub'),
            workspace_id: workspaceId,
            audience_id: audienceId,
            contact_id: id,
            subscribed: 1,
            subscribed_at: now,
            unsubscribed_at: null,
            created_at: now,
            updated_at: now,
          });
        }
        await tx.insertInto('contacts').values(contacts).execute();
        await tx.insertInto('subscribers').values(subscribers).execute();
      }
    });
  }
  await db
    .updateTable('audiences')
    .set((eb) => ({ subscriber_count: eb('subscriber_count', '+', count) }))
    .where('id', '=', audienceId)
    .execute();
}
