// A contact's activity: the product events tied to it, newest first
// (https://emailit.com/docs/events/ "Contacts and webhooks").
import type { Db } from '../../platform/db/database.ts';
import { plainError } from '../../platform/http/errors.ts';
import { pageLimitList, type Query } from '../../platform/http/lists.ts';
import { findContact } from '../contacts/service.ts';
import { scopeOf } from './definitions.ts';

export async function listContactActivity(db: Db, workspaceId: string, idOrEmail: string, query: Query, requestUrl: string) {
  const contact = await findContact(db, workspaceId, idOrEmail);
  if (!contact) throw plainError(404, 'Contact not found');
  let rows = db
    .selectFrom('contact_events as ce')
    .innerJoin('events as e', 'e.id', 'ce.event_id')
    .select(['e.id', 'e.type', 'e.data', 'e.created_at'])
    .where('ce.contact_id', '=', contact.id)
    .where('ce.workspace_id', '=', workspaceId);
  const type =
    typeof query.type === 'string'
      ? query.type
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean)
      : [];
  if (type.length > 0) rows = rows.where('e.type', 'in', type);
  const scope = typeof query.scope === 'string' ? query.scope : undefined;
  if (scope === 'workspace') rows = rows.where('e.type', 'like', 'w:%');
  if (scope === 'custom') rows = rows.where('e.type', 'like', 'c:%');
  return pageLimitList(rows.orderBy('ce.created_at', 'desc').orderBy('ce.event_id', 'desc'), query, requestUrl, 25, (row) => {
    const object = JSON.parse(row.data) as Record<string, unknown>;
    return {
      object: 'event' as const,
      id: row.id,
      type: row.type,
      data: { object: { scope: scopeOf(row.type), ...object } },
      created_at: row.created_at,
    };
  });
}
