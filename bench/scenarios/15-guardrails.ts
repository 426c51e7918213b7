// Deliverability guardrails (docs/deliverability.md): what one guardrail check of a large
// campaign costs (campaignOutcomes: its emails counted through the recipient snapshot), and what
// the workspace rates of GET /v2/stats/deliverability cost, over N campaign emails written
// straight into a fresh database (98 % delivered, 0.2 % complained, 1.8 % hard bounces).
import { mkdtempSync, rmSync } from 'node:fs';
import { sql } from 'kysely';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scenario } from '../run.ts';
import { freshBenchDatabase, percentile } from '../lib.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';
import { emailToken, newId } from '../../src/platform/ids.ts';
import { nowIso } from '../../src/platform/clock.ts';
import { createWorkspace } from '../../src/resources/workspaces/service.ts';
import { campaignOutcomes } from '../../src/resources/campaigns/guardrails.ts';
import { deliverabilityStats } from '../../src/resources/overview/deliverability.ts';

const EMAILS = Number(process.env.BENCH_GUARDRAILS_EMAILS ?? 100_000);
const RUNS = 7;

async function timed(runs: number, work: () => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await work();
    ms.push(performance.now() - start);
  }
  return ms;
}

export const scenario: Scenario = {
  name: 'guardrails',
  description: `one guardrail check of a ${EMAILS.toLocaleString('en')}-email campaign, and the workspace's 24 h / 7 day rates, on ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`,
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'postlane-bench-guardrails-'));
    const database = await freshBenchDatabase(dir);
    const handle = openDatabase(database.url);
    const db = handle.db;
    try {
      await migrateToLatest(db);
      const { workspace } = await createWorkspace(db, { name: 'Bench', credits: 0 });
      const now = nowIso();
      const contentId = newId('emc');
      await db
        .insertInto('email_contents')
        .values({ id: contentId, workspace_id: workspace.id, message: '{}', raw: null, size: 2, created_at: now, purged_at: null })
        .execute();
      const campaignId = newId('cmp');
      await db
        .insertInto('campaigns')
        .values({
          id: campaignId,
          workspace_id: workspace.id,
          name: 'Bench',
          status: 'sending',
          status_reason: null,
          paused_reason: null,
          guardrails_overridden: 0,
          subject: 'S',
          from_email: 'news@bench.test',
          from_name: '',
          reply_to: '',
          preview_text: null,
          html: '<p>x</p>',
          text: null,
          content: null,
          content_type: 'html',
          recipients: '[]',
          scheduled_at: null,
          sent_at: now,
          completed_at: null,
          canceled_at: null,
          content_id: contentId,
          sending_domain_id: 'dom_bench',
          recipient_count: EMAILS,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const chunk = 500;
      for (let start = 0; start < EMAILS; start += chunk * 20) {
        await db.transaction().execute(async (tx) => {
          for (let i = start; i < Math.min(EMAILS, start + chunk * 20); i += chunk) {
            const emails = [];
            const recipients = [];
            for (let n = i; n < Math.min(EMAILS, i + chunk); n++) {
              const id = newId('em');
              const status = n % 500 === 0 ? 'complained' : n % 50 === 1 ? 'bounced' : 'delivered';
              emails.push({
                id,
                workspace_id: workspace.id,
                type: 'outbound',
                source: 'campaign',
                token: emailToken(),
                message_id: `<${id}@bench.test>`,
                content_id: contentId,
                from: 'news@bench.test',
                from_address: 'news@bench.test',
                to: `r-${n}@example.org`,
                recipient_kind: 'to',
                subject: 'S',
                status,
                scheduled_at: null,
                api_key_id: null,
                sending_domain_id: 'dom_bench',
                tag: null,
                spam_score: null,
                size: 10,
                meta: JSON.stringify({ campaign_id: campaignId }),
                track_loads: 0,
                track_clicks: 0,
                original_id: null,
                status_detail: null,
                delivered_at: status === 'bounced' ? null : now,
                bounce_reason: status === 'bounced' ? 'mailbox_not_found' : null,
                bounce_type: status === 'bounced' ? 'hard' : null,
                created_at: now,
                updated_at: now,
              });
              recipients.push({ campaign_id: campaignId, contact_id: newId('con'), status: 'queued', email_id: id, unsubscribed_at: null });
            }
            await tx.insertInto('emails').values(emails).execute();
            await tx.insertInto('campaign_recipients').values(recipients).execute();
          }
        });
      }
      if (handle.dialect === 'postgres') await sql`analyze`.execute(db);
      const outcomes = await campaignOutcomes(db, campaignId);
      const check = await timed(RUNS, () => campaignOutcomes(db, campaignId));
      const stats = await timed(RUNS, () => deliverabilityStats(db, workspace.id));
      const ms = (values: number[]) => `median ${percentile(values, 50).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`;
      return {
        name: 'guardrails',
        lines: [
          `campaign of ${EMAILS.toLocaleString('en')} emails: ${outcomes.delivered} delivered, ${outcomes.complained} complained, ${outcomes.hardBounced} hard bounces`,
          `one guardrail check (campaignOutcomes), ${RUNS} runs: ${ms(check)}`,
          `workspace rates, 24 h and 7 days (GET /v2/stats/deliverability's query), ${RUNS} runs: ${ms(stats)}`,
        ],
      };
    } finally {
      await handle.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
