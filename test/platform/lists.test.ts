// The list module against a real table on the engine under test: every condition of every
// field type, match=or, search, both sort conventions, and page URLs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { freshDatabase } from '../helpers/app.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { applyListQuery, pageUrl, pageLimitList, perPageList, type ListSpec, type Query } from '../../src/platform/http/lists.ts';

let db: Kysely<any>;
let cleanup: () => Promise<void>;

const rows = [
  { id: 'r1', name: 'Alpha', status: 'sent', score: 1.5, flag: 1, note: null, created_at: '2026-09-01T10:00:00.000000Z' },
  { id: 'r2', name: 'beta', status: 'draft', score: 7, flag: 0, note: '', created_at: '2026-09-02T00:00:00.000000Z' },
  { id: 'r3', name: 'Gamma 50%_off', status: 'sent', score: -2, flag: 1, note: 'hello', created_at: '2026-09-02T23:59:59.999999Z' },
  { id: 'r4', name: 'delta', status: 'failed', score: 10, flag: 0, note: 'x', created_at: '2026-09-03T00:00:00.000000Z' },
];

before(async () => {
  const database = await freshDatabase();
  const handle = openDatabase(database.url, { schema: database.schema });
  db = handle.db as unknown as Kysely<any>;
  await db.schema
    .createTable('items')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('status', 'text')
    .addColumn('score', 'real')
    .addColumn('flag', 'integer')
    .addColumn('note', 'text')
    .addColumn('created_at', 'text')
    .execute();
  await db.insertInto('items').values(rows).execute();
  cleanup = async () => {
    await handle.close();
    await database.drop();
  };
});
after(() => cleanup());

const spec: ListSpec = {
  fields: {
    name: { type: 'string' },
    note: { type: 'string' },
    status: { type: 'enum', values: ['sent', 'draft', 'failed'] },
    score: { type: 'number' },
    flag: { type: 'boolean' },
    created_at: { type: 'date' },
  },
  searchColumns: ['name', 'note'],
  sortConvention: 'order-direction',
};

async function ids(query: Query, listSpec: ListSpec = spec): Promise<string[]> {
  const result = await applyListQuery(db.selectFrom('items').selectAll(), query, listSpec).execute();
  return result.map((r) => String(r.id));
}

test('default order is newest first', async () => {
  assert.deepEqual(await ids({}), ['r4', 'r3', 'r2', 'r1']);
});

test('string conditions are case-insensitive and treat % and _ literally', async () => {
  assert.deepEqual(await ids({ 'name.exact': 'ALPHA' }), ['r1']);
  assert.deepEqual(await ids({ 'name.not_exact': 'alpha' }), ['r4', 'r3', 'r2']);
  assert.deepEqual(await ids({ 'name.contains': '50%_' }), ['r3']);
  assert.deepEqual(await ids({ 'name.contains': '%' }), ['r3']);
  assert.deepEqual(await ids({ 'name.not_contains': 'a' }), []);
  assert.deepEqual(await ids({ 'name.starts_with': 'g' }), ['r3']);
  assert.deepEqual(await ids({ 'name.ends_with': 'TA' }), ['r4', 'r2']);
  assert.deepEqual(await ids({ 'note.is_empty': '' }), ['r2', 'r1']);
  assert.deepEqual(await ids({ 'note.is_not_empty': '1' }), ['r4', 'r3']);
  assert.deepEqual(await ids({ 'note.not_contains': 'hell' }), ['r4', 'r2', 'r1'], 'null notes do not contain it');
});

test('enum conditions accept only known values', async () => {
  assert.deepEqual(await ids({ 'status.exact': 'sent' }), ['r3', 'r1']);
  assert.deepEqual(await ids({ 'status.not_exact': 'sent' }), ['r4', 'r2']);
  assert.deepEqual(await ids({ 'status.in': 'draft,failed,bogus' }), ['r4', 'r2']);
  assert.deepEqual(await ids({ 'status.not_in': 'draft' }), ['r4', 'r3', 'r1']);
  assert.deepEqual(await ids({ 'status.exact': 'bogus' }), ['r4', 'r3', 'r2', 'r1'], 'an unknown enum value is ignored');
});

test('number conditions', async () => {
  assert.deepEqual(await ids({ 'score.exact': '7' }), ['r2']);
  assert.deepEqual(await ids({ 'score.not_exact': '7' }), ['r4', 'r3', 'r1']);
  assert.deepEqual(await ids({ 'score.greater_than': '1.5' }), ['r4', 'r2']);
  assert.deepEqual(await ids({ 'score.less_than': '0' }), ['r3']);
  assert.deepEqual(await ids({ 'score.between': '10,1' }), ['r4', 'r2', 'r1']);
  assert.deepEqual(await ids({ 'score.greater_than': 'lots' }), ['r4', 'r3', 'r2', 'r1'], 'a non-number is ignored');
});

test('boolean conditions', async () => {
  assert.deepEqual(await ids({ 'flag.exact': 'true' }), ['r3', 'r1']);
  assert.deepEqual(await ids({ 'flag.exact': '0' }), ['r4', 'r2']);
  assert.deepEqual(await ids({ 'flag.exact': 'maybe' }), ['r4', 'r3', 'r2', 'r1']);
});

test('date conditions: a bare date is a whole UTC day', async () => {
  assert.deepEqual(await ids({ 'created_at.exact': '2026-09-02' }), ['r3', 'r2']);
  assert.deepEqual(await ids({ 'created_at.after': '2026-09-02' }), ['r4']);
  assert.deepEqual(await ids({ 'created_at.before': '2026-09-02' }), ['r1']);
  assert.deepEqual(await ids({ 'created_at.between': '2026-09-01,2026-09-02' }), ['r3', 'r2', 'r1']);
  assert.deepEqual(await ids({ 'created_at.after': '2026-09-01T12:00:00Z' }), ['r4', 'r3', 'r2']);
  assert.deepEqual(await ids({ 'created_at.after': 'not a date' }), ['r4', 'r3', 'r2', 'r1']);
});

test('several filters: all by default, or with match=or; repeated keys; search ANDs with them', async () => {
  assert.deepEqual(await ids({ 'status.exact': 'sent', 'score.greater_than': '0' }), ['r1']);
  assert.deepEqual(await ids({ 'status.exact': 'failed', 'score.greater_than': '5', match: 'or' }), ['r4', 'r2']);
  assert.deepEqual(await ids({ 'name.contains': ['a', 'l'] }), ['r4', 'r1']);
  assert.deepEqual(await ids({ search: 'HEL' }), ['r3']);
  assert.deepEqual(await ids({ search: 'a', 'status.exact': 'draft', 'score.less_than': '0', match: 'or' }), ['r3', 'r2']);
});

test('sorting: order+direction and sort+order conventions; unknown sort keys fall back', async () => {
  assert.deepEqual(await ids({ order: 'score' }), ['r3', 'r1', 'r2', 'r4']);
  assert.deepEqual(await ids({ order: 'score', direction: 'desc' }), ['r4', 'r2', 'r1', 'r3']);
  assert.deepEqual(await ids({ order: 'name', direction: 'asc' }), ['r1', 'r2', 'r4', 'r3']);
  assert.deepEqual(await ids({ order: 'nonsense' }), ['r4', 'r3', 'r2', 'r1']);
  const sortOrder: ListSpec = { ...spec, sortConvention: 'sort-order' };
  assert.deepEqual(await ids({ sort: 'score' }, sortOrder), ['r4', 'r2', 'r1', 'r3'], 'sort without order is descending');
  assert.deepEqual(await ids({ sort: 'score', order: 'asc' }, sortOrder), ['r3', 'r1', 'r2', 'r4']);
  assert.deepEqual(await ids({ order: 'asc' }, sortOrder), ['r1', 'r2', 'r3', 'r4'], 'order alone flips the default');
});

test('page envelopes', async () => {
  const query = { limit: '3', 'status.in': 'sent,draft,failed' };
  const first = await pageLimitList(
    applyListQuery(db.selectFrom('items').selectAll(), query, spec),
    query,
    '/v2/items?limit=3&status.in=sent,draft,failed',
    10,
    (r) => String(r.id),
  );
  assert.deepEqual(first, {
    data: ['r4', 'r3', 'r2'],
    next_page_url: '/v2/items?limit=3&status.in=sent%2Cdraft%2Cfailed&page=2',
    previous_page_url: null,
  });

  const perPageQuery = { page: '2', per_page: '3' };
  const base = applyListQuery(db.selectFrom('items').selectAll(), perPageQuery, spec);
  const second = await perPageList(base, db.selectFrom('items'), perPageQuery, (r) => String(r.id));
  assert.deepEqual(second, { data: ['r1'], total_records: 4, per_page: 3, current_page: 2, total_pages: 2 });
});

test('pageUrl replaces page and keeps everything else', () => {
  assert.equal(pageUrl('/v2/x', 2), '/v2/x?page=2');
  assert.equal(pageUrl('/v2/x?page=5&search=a%20b&scope.exact=full', 4), '/v2/x?page=4&search=a+b&scope.exact=full');
});

test('NULLs sort last in both directions on every engine', async () => {
  const spec2: ListSpec = { ...spec, fields: { ...spec.fields, note: { type: 'string' } } };
  assert.deepEqual((await ids({ order: 'note', direction: 'asc' }, spec2)).at(-1), 'r1');
  assert.deepEqual((await ids({ order: 'note', direction: 'desc' }, spec2)).at(-1), 'r1');
});
