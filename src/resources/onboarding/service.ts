// The getting-started checklist, each step read from what is really there: domains and their
// last DNS check, emails, API keys and their last use. Nothing is stored for it.
import type { AppContext } from '../../platform/context.ts';
import type { Db } from '../../platform/db/database.ts';

export const STEP_KEYS = [
  'domain_added',
  'dns_published',
  'domain_verified',
  'test_email_sent',
  'api_key_created',
  'api_call_made',
] as const;
export type StepKey = (typeof STEP_KEYS)[number];

/** A workspace is made with one key ("Default key", printed once at the first start); the step asks for a key of the user's own. */
const FIRST_KEY_WINDOW_MS = 5_000;

async function firstDomain(db: Db, workspaceId: string) {
  // The furthest along first: a verified domain, then one whose records check out, then the newest.
  const rows = await db
    .selectFrom('domains')
    .select(['id', 'name', 'verification_status', 'spf_status', 'dkim_status', 'return_path_status', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at', 'desc')
    .limit(100)
    .execute();
  const published = (d: (typeof rows)[number]) => d.spf_status === 'ok' && d.dkim_status === 'ok' && d.return_path_status === 'ok';
  return rows.find((d) => d.verification_status === 'verified') ?? rows.find(published) ?? rows[0] ?? null;
}

export async function onboardingState(ctx: AppContext, workspaceId: string) {
  const { db, config } = ctx;
  const domain = await firstDomain(db, workspaceId);
  const email = await db
    .selectFrom('emails')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', 'outbound')
    .limit(1)
    .executeTakeFirst();
  const workspace = await db.selectFrom('workspaces').select('created_at').where('id', '=', workspaceId).executeTakeFirst();
  const keys = await db
    .selectFrom('api_keys')
    .select(['name', 'created_at', 'last_used_at'])
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .execute();
  const madeAt = workspace ? Date.parse(workspace.created_at) : 0;
  const ownKeys = keys.filter((k) => !(k.name === 'Default key' && Date.parse(k.created_at) - madeAt < FIRST_KEY_WINDOW_MS));
  const published = domain !== null && domain.spf_status === 'ok' && domain.dkim_status === 'ok' && domain.return_path_status === 'ok';
  const done: Record<StepKey, boolean> = {
    domain_added: domain !== null,
    dns_published: published || domain?.verification_status === 'verified',
    domain_verified: domain?.verification_status === 'verified',
    test_email_sent: email !== undefined,
    api_key_created: ownKeys.length > 0,
    api_call_made: keys.some((k) => k.last_used_at !== null),
  };
  const steps = STEP_KEYS.map((key) => ({ key, done: done[key] }));
  return {
    object: 'onboarding' as const,
    completed: steps.every((s) => s.done),
    steps,
    domain: domain ? { id: domain.id, name: domain.name, verification_status: domain.verification_status } : null,
    api_base_url: config.publicUrl,
    smtp: {
      host: config.mailHostname,
      port: config.smtpSubmissionPort === 0 ? null : config.smtpSubmissionPort,
      tls_port: config.smtpSubmissionTlsPort,
    },
  };
}
