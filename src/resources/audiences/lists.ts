// The audience lists: v2 audiences (`page`/`limit`, default 10, `total_records`), an
// audience's subscribers (`page` with `limit` or `per_page`, default 25, `usage`), and the
// legacy v1 audiences (`per_page`, default 25, `filter[name]`).
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import {
  applyListQuery,
  countRows,
  fetchPage,
  pageLinks,
  pagingFrom,
  perPageList,
  type ListSpec,
  type Query,
} from '../../platform/http/lists.ts';
import { audienceObject, legacyAudienceObject, subscriberObject, type AudienceRow } from './records.ts';
import { audienceUsage } from './service.ts';

const audienceSpec: ListSpec = {
  fields: {
    name: { type: 'string' },
    subscribers_count: { type: 'number', column: 'subscriber_count' },
    created_at: { type: 'date' },
    updated_at: { type: 'date' },
  },
  searchColumns: ['name'],
  sortConvention: 'order-direction',
};

export async function listAudiences(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const matching = applyListQuery(db.selectFrom('audiences').selectAll().where('workspace_id', '=', workspaceId), query, audienceSpec);
  const paging = pagingFrom(query, 10);
  const [{ rows, hasNext }, total] = await Promise.all([fetchPage(matching, paging), countRows(matching)]);
  return { data: rows.map(audienceObject), total_records: total, ...pageLinks(requestUrl, paging, hasNext) };
}

const subscriberSpec: ListSpec = {
  fields: {
    email: { type: 'string', expression: sql.ref('c.email') },
    subscribed: { type: 'boolean', expression: sql.ref('s.subscribed') },
    subscribed_at: { type: 'date', expression: sql.ref('s.subscribed_at') },
    unsubscribed_at: { type: 'date', expression: sql.ref('s.unsubscribed_at') },
    created_at: { type: 'date', expression: sql.ref('s.created_at') },
    updated_at: { type: 'date', expression: sql.ref('s.updated_at') },
  },
  searchColumns: ['c.email', 'c.first_name', 'c.last_name'],
  sortConvention: 'order-direction',
  defaultSortColumn: 's.created_at',
  idColumn: 's.id',
};

export async function listSubscribers(db: Db, workspaceId: string, audience: AudienceRow, rawQuery: Query, requestUrl: string) {
  const query: Query = { ...rawQuery };
  if (query.subscribed !== undefined) query['subscribed.exact'] = query.subscribed;
  if (query.limit === undefined && query.per_page !== undefined) query.limit = query.per_page;
  const base = db
    .selectFrom('subscribers as s')
    .innerJoin('contacts as c', 'c.id', 's.contact_id')
    .selectAll('s')
    .select([
      'c.email as c_email',
      'c.first_name as c_first_name',
      'c.last_name as c_last_name',
      'c.custom_fields as c_custom_fields',
      'c.unsubscribed as c_unsubscribed',
      'c.created_at as c_created_at',
      'c.updated_at as c_updated_at',
    ])
    .where('s.audience_id', '=', audience.id);
  const matching = applyListQuery(base, query, subscriberSpec);
  const paging = pagingFrom(query, 25);
  const [{ rows, hasNext }, total, usage] = await Promise.all([
    fetchPage(matching, paging),
    countRows(matching),
    audienceUsage(db, workspaceId, audience),
  ]);
  return {
    data: rows.map((row) => {
      const { c_email, c_first_name, c_last_name, c_custom_fields, c_unsubscribed, c_created_at, c_updated_at, ...subscriber } = row;
      const contact = {
        id: subscriber.contact_id,
        workspace_id: workspaceId,
        email: c_email,
        first_name: c_first_name,
        last_name: c_last_name,
        custom_fields: c_custom_fields,
        unsubscribed: c_unsubscribed,
        created_at: c_created_at,
        updated_at: c_updated_at,
      };
      return subscriberObject(subscriber, audience, contact);
    }),
    total_records: total,
    ...pageLinks(requestUrl, paging, hasNext),
    usage,
  };
}

export async function listLegacyAudiences(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  let base = db.selectFrom('audiences').selectAll().where('workspace_id', '=', workspaceId);
  const name = query['filter[name]'];
  const wanted = (Array.isArray(name) ? name[0] : name)?.trim();
  if (wanted)
    base = base.where(sql<boolean>`lower(name) like ${`%${wanted.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`} escape '\\'`);
  return perPageList(base.orderBy('created_at', 'desc').orderBy('id', 'desc'), base, query, legacyAudienceObject, requestUrl);
}
