// Postlane additions for writing campaigns in the dashboard (docs/api.md, "Writing campaigns"):
// a campaign's body as it was stored (the campaign objects never echo it), a copy of a campaign
// as a new draft (its body is fixed at creation, so a copy is how it changes), a test send to a
// few addresses, and compiling the block editor's MJML.
import type { AppContext } from '../../platform/context.ts';
import type { Db } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { ApiError, fieldValidationError } from '../../platform/http/errors.ts';
import { normalizeAddress } from '../../platform/addresses.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { parseTemple } from '../../templating/temple.ts';
import { acceptMessage, type StoredMessage } from '../emails/service.ts';
import { findContactByEmail } from '../contacts/service.ts';
import { checkRenderLimit, renderSource } from '../mjml/service.ts';
import { campaignEventObject, campaignObject, requireCampaign, type CampaignRow } from './records.ts';
import { campaignMergeValues } from './merge-values.ts';
import { unsubscribeUrl } from './unsubscribe.ts';

/** Addresses one test send may go to. */
export const MAX_TEST_RECIPIENTS = 5;
export const TEST_SUBJECT_PREFIX = '[Test] ';

/** `content` as it was given: an object or array given as JSON comes back as one. */
function contentOf(stored: string | null): unknown {
  if (stored === null) return null;
  const first = stored.trimStart()[0];
  if (first === '{' || first === '[') {
    try {
      return JSON.parse(stored);
    } catch {
      return stored;
    }
  }
  return stored;
}

export async function campaignContent(db: Db, workspaceId: string, idOrName: string) {
  const row = await requireCampaign(db, workspaceId, idOrName);
  return {
    object: 'campaign_content' as const,
    id: row.id,
    content_type: row.content_type,
    html: row.html,
    text: row.text,
    content: contentOf(row.content),
  };
}

const MAX_NAME = 255;
const copyName = (name: string) => {
  const suffix = ' (copy)';
  return name.length + suffix.length > MAX_NAME ? `${name.slice(0, MAX_NAME - suffix.length)}${suffix}` : `${name}${suffix}`;
};

/** A new draft with the campaign's settings, audiences and body (any status may be copied). */
export async function duplicateCampaign(db: Db, workspaceId: string, idOrName: string) {
  return db.transaction().execute(async (tx) => {
    const source = await requireCampaign(tx, workspaceId, idOrName);
    const now = nowIso();
    const row: CampaignRow = {
      ...source,
      id: newId('cmp'),
      name: copyName(source.name),
      status: 'draft',
      status_reason: null,
      paused_reason: null,
      guardrails_overridden: 0,
      scheduled_at: null,
      sent_at: null,
      completed_at: null,
      canceled_at: null,
      content_id: null,
      sending_domain_id: null,
      recipient_count: 0,
      created_at: now,
      updated_at: now,
    };
    await tx.insertInto('campaigns').values(row).execute();
    await emitEvent(tx, workspaceId, 'campaign.created', campaignEventObject(row));
    return campaignObject(row);
  });
}

function render(source: string | null, values: Record<string, unknown>, html: boolean): string | null {
  if (source === null) return null;
  try {
    return parseTemple(source).render(values, { html });
  } catch {
    return source; // not a valid template: sent as written, as the campaign itself would be
  }
}

const quoted = (name: string, address: string) => (name ? `"${name.replace(/["\\]/g, '\\$&')}" <${address}>` : address);

/**
 * The campaign's current body to each address, one email each, subject prefixed "[Test] ": merge
 * tags filled from the contact with that address when there is one (its real unsubscribe link),
 * else from the address alone (so defaults such as {{first_name|"there"}} show). Sent as API
 * mail: the send checks and limits apply, and each costs what an API email costs (1 credit).
 */
export async function sendCampaignTest(ctx: AppContext, principal: Principal, idOrName: string, emails: string[]) {
  const workspaceId = principal.workspaceId;
  const addresses: string[] = [];
  const problems: string[] = [];
  for (const given of emails) {
    const address = normalizeAddress(given);
    if (address === null) problems.push(`${given} is not an email address`);
    else if (!addresses.includes(address)) addresses.push(address);
  }
  if (addresses.length === 0 && problems.length === 0) problems.push('at least one address is required');
  if (addresses.length > MAX_TEST_RECIPIENTS) problems.push(`at most ${MAX_TEST_RECIPIENTS} addresses per test send`);
  if (problems.length > 0) throw fieldValidationError({ emails: problems }, 422);

  const row = await requireCampaign(ctx.db, workspaceId, idOrName);
  const missing: Record<string, string[]> = {};
  if (row.from_email === '') missing.from_email = ['from_email is required'];
  if (row.subject.trim() === '') missing.subject = ['a subject is required'];
  if (!row.html && !row.text) missing.html = ['html or text content is required'];
  const first = Object.values(missing)[0];
  if (first) throw new ApiError(422, { message: `The test cannot be sent: ${first[0]}`, errors: missing });

  const sent: Array<{ email: string; email_id: string; contact_id: string | null }> = [];
  for (const address of addresses) {
    const contact = await findContactByEmail(ctx.db, workspaceId, address);
    const values = contact
      ? campaignMergeValues(contact, unsubscribeUrl(ctx, row.id, contact.id))
      : campaignMergeValues({ email: address, first_name: null, last_name: null, custom_fields: null }, '#unsubscribe');
    const message: StoredMessage = {
      from: { address: row.from_email, name: row.from_name },
      to: [{ address, name: '' }],
      cc: [],
      bcc: [],
      reply_to: [{ address: row.reply_to || row.from_email, name: '' }],
      subject: `${TEST_SUBJECT_PREFIX}${render(row.subject, values, false)}`,
      html: render(row.html, values, true),
      text: render(row.text, values, false),
      headers: {},
      attachments: [],
    };
    const accepted = await acceptMessage(ctx, principal, {
      message,
      fromHeader: quoted(row.from_name, row.from_email),
      meta: { campaign_id: row.id, campaign_test: 'true' },
      scheduledAt: null,
      tracking: false,
      source: 'api',
    });
    sent.push({ email: address, email_id: accepted.rows[0].id, contact_id: contact?.id ?? null });
  }
  return { object: 'campaign_test' as const, campaign_id: row.id, subject_prefix: TEST_SUBJECT_PREFIX, sent };
}

/** Compiles the block editor's MJML (any workspace: campaigns in MJML send for everyone). */
export async function renderEditorMjml(workspaceId: string, mjml: string) {
  checkRenderLimit(workspaceId);
  const result = await renderSource(mjml, undefined);
  return { valid: result.valid, html: result.html, diagnostics: result.diagnostics };
}
