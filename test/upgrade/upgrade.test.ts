// Upgrades: a database made by an earlier release (test/upgrade/fixtures, one per release,
// made by scripts/make-upgrade-fixture.ts) is migrated by today's code and served by today's
// Postlane: every table keeps its rows, the same objects read back through the API, the
// release's keys still authenticate, its sealed secrets still open, and a new send works.
// On SQLite always; on PostgreSQL when TEST_DATABASE_URL is set (the dump restored into a
// fresh schema).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { pino } from 'pino';
import { openDatabase, type Db } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';
import { startPostlane } from '../../src/server.ts';
import { apiClient, databaseKind, eventually, testConfig, usingPostgres } from '../helpers/app.ts';
import { startDnsServer } from '../helpers/dns-server.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { publishRecords } from '../helpers/sending.ts';
import { fixtureManifests, restoreFixture } from './restore.ts';
import type { FixtureManifest } from './fixture.ts';

async function tablesOf(db: Db): Promise<string[]> {
  const { rows } = usingPostgres
    ? await sql<{
        name: string;
      }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(
        db,
      )
    : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db);
  return rows.map((r) => r.name).sort();
}

async function countOf(db: Db, table: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(db);
  return Number(rows[0].n);
}

/** The fields of `before` (the release's answer) that `after` must show unchanged. */
function assertSameFields(what: string, before: Record<string, unknown>, after: Record<string, unknown>, fields: string[]) {
  for (const field of fields) {
    assert.ok(field in before, `the fixture's ${what} has ${field}`);
    assert.deepEqual(after[field], before[field], `${what}.${field} after the upgrade`);
  }
}

for (const manifest of fixtureManifests()) {
  test(`${databaseKind}: a database of release ${manifest.release} (${manifest.commit}) upgrades with every row and object intact`, async () => {
    await upgradeAndCheck(manifest);
  });
}

/** Tables a later migration drops on purpose: their work moved elsewhere. */
const RETIRED_TABLES = new Set([
  // 0029: the domain re-check is a recurring job; its chain's bookkeeping is no longer needed.
  'domain_recheck_chain',
]);

async function upgradeAndCheck(manifest: FixtureManifest) {
  const fixture = manifest.dialects[databaseKind];
  const restored = await restoreFixture(manifest, process.env.TEST_DATABASE_URL);
  const dns = await startDnsServer();
  const sink = await startSmtpSink({ rules: [] });
  try {
    // The migrations, through the function `postlane migrate` and `postlane serve` both run.
    const handle = openDatabase(restored.url, { schema: restored.schema });
    try {
      const applied = await migrateToLatest(handle.db);
      const tables = await tablesOf(handle.db);
      for (const [table, before] of Object.entries(fixture.counts)) {
        if (RETIRED_TABLES.has(table)) {
          assert.ok(!tables.includes(table), `table ${table} was retired by its migration`);
          continue;
        }
        assert.ok(tables.includes(table), `table ${table} still exists`);
        const after = await countOf(handle.db, table);
        if (table === 'kysely_migration') assert.equal(after, before + applied.length, 'one bookkeeping row per applied migration');
        else assert.equal(after, before, `rows of ${table}`);
      }
    } finally {
      await handle.close();
    }

    dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
    dns.set('mx.example.org', 'A', ['127.0.0.1']);
    publishRecords(dns, fixture.seeded.objects.domain.dns_records);
    const config = testConfig(restored, {
      ENCRYPTION_KEY: manifest.encryption_key,
      DNS_SERVERS: dns.address,
      MX_PORT: String(sink.port),
      MAIL_HOSTNAME: 'mail.postlane.test',
      ALLOW_PRIVATE_URLS: 'true',
      // The fixture's content is older than the default retention: keep it for the reads below.
      CONTENT_RETENTION_DAYS: '3650',
    });
    const running = await startPostlane(config, { schema: restored.schema, logger: pino({ level: 'silent' }), jobPollMs: 50 });
    try {
      const url = running.url!;
      const api = apiClient(url, fixture.seeded.api_key);
      const { ids, objects } = fixture.seeded;

      // The release's full key authenticates and lists its second key.
      const keys = await api.get('/v2/api-keys');
      assert.equal(keys.status, 200, keys.text);
      assert.ok(
        keys.body.data.some((k: { id: string }) => k.id === ids.api_key),
        'the second key is listed',
      );

      const email = await api.get(`/v2/emails/${ids.email}`);
      assert.equal(email.status, 200, email.text);
      assertSameFields('email', objects.email, email.body, ['id', 'from', 'to', 'subject', 'status', 'message_id', 'created_at']);
      const scheduled = await api.get(`/v2/emails/${ids.email_scheduled}`);
      assertSameFields('scheduled email', objects.email_scheduled, scheduled.body, ['id', 'status', 'scheduled_at']);

      const contact = await api.get(`/v2/contacts/${ids.contact}`);
      assert.equal(contact.status, 200, contact.text);
      assertSameFields('contact', objects.contact, contact.body, ['id', 'email', 'first_name', 'last_name', 'custom_fields', 'created_at']);

      const campaign = await api.get(`/v2/campaigns/${ids.campaign}`);
      assert.equal(campaign.status, 200, campaign.text);
      assertSameFields('campaign', objects.campaign, campaign.body, ['id', 'name', 'subject', 'status', 'from_email']);

      // The webhook's signing secret was sealed by the release: it still opens to the same value.
      const webhook = await api.get(`/v2/webhooks/${ids.webhook}`);
      assert.equal(webhook.status, 200, webhook.text);
      const webhookOf = (body: any) => (body.data && !body.id ? body.data : body);
      assertSameFields('webhook', objects.webhook, webhookOf(webhook.body), ['id', 'name', 'url', 'secret']);

      const domain = await api.get(`/v2/domains/${ids.domain}`);
      assertSameFields('domain', objects.domain, domain.body, ['id', 'name', 'verified_at']);

      // A dashboard user of the release signs in with the password set then.
      const signIn = await fetch(`${url}/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: url },
        body: JSON.stringify({ email: 'member@example.org', password: 'fixture-password-1' }),
      });
      assert.equal(signIn.status, 200, await signIn.text());

      // A new send with the release's sending key, DKIM-signed with the domain's sealed key.
      const sender = apiClient(url, fixture.seeded.sending_key!);
      const sent = await sender.post('/v2/emails', {
        from: 'Acme <hello@acme.test>',
        to: 'after-upgrade@example.org',
        subject: 'After the upgrade',
        text: 'Still sending.',
      });
      assert.equal(sent.status, 200, sent.text);
      await eventually(async () => (await api.get(`/v2/emails/${sent.body.id}`)).body.status === 'delivered', 20_000);
      const message = sink.messages.find((m) => m.rcptTo.includes('after-upgrade@example.org'));
      assert.ok(message, 'the new email reached the recipient server');
      assert.match(message.raw.toString('utf8'), /^DKIM-Signature: .*d=acme\.test/m);
    } finally {
      await running.close();
    }
  } finally {
    await sink.close();
    await dns.close();
    await restored.drop();
  }
}
