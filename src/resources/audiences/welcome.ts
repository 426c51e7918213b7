// The audience's confirmation email (the audience setting `confirmation_email`): when it is enabled,
// a new subscriber (created or resubscribed, by the API, a hosted page, the public subscribe
// link or a confirmed double opt-in) gets one email saying so, with an optional button
// (`button_url`), sent through the same acceptance and delivery path as API mail (one credit).
// It is sent after the subscription commits; a send the sending rules refuse (no credits, a
// sender no longer verified) is logged and never undoes the subscription.
import type { AppContext } from '../../platform/context.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { escapeHtml } from './pages.ts';
import { acceptMessage, parseAddressField, type StoredMessage } from '../emails/service.ts';
import { confirmationEmailOf, type AudienceRow, type ConfirmationEmailSettings } from './records.ts';
import type { SubscribeOutcome } from './subscribers.ts';

const publicName = (audience: AudienceRow) => audience.public_name ?? audience.name;

export function welcomeEmailHtml(settings: ConfirmationEmailSettings['email'], audienceName: string): string {
  const heading = settings.heading ?? `You are subscribed`;
  const body = settings.body ?? `You are now subscribed to ${audienceName}.`;
  const button = settings.button_url
    ? `<p><a href="${escapeHtml(settings.button_url)}" style="display:inline-block;padding:10px 18px;background:#1f4fbf;color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(settings.button_label ?? 'Visit')}</a></p>\n`
    : '';
  const footer = settings.footer ? `<p style="font-size:13px;color:#4a4a4a">${escapeHtml(settings.footer)}</p>\n` : '';
  return `<!doctype html><html lang="en"><body style="font-family:sans-serif;color:#1a1a1a">
<h1 style="font-size:20px">${escapeHtml(heading)}</h1>
<p>${escapeHtml(body)}</p>
${button}${footer}</body></html>`;
}

export function welcomeEmailText(settings: ConfirmationEmailSettings['email'], audienceName: string): string {
  const lines = [settings.heading ?? 'You are subscribed', '', settings.body ?? `You are now subscribed to ${audienceName}.`];
  if (settings.button_url) lines.push('', `${settings.button_label ?? 'Visit'}: ${settings.button_url}`);
  if (settings.footer) lines.push('', settings.footer);
  return `${lines.join('\n')}\n`;
}

/** Sends the confirmation email when the audience has it on and `outcome` made a subscriber;
 *  returns the email's id, or null when none was sent. Never throws. */
export async function sendWelcome(
  ctx: AppContext,
  audience: AudienceRow,
  email: string,
  outcome: SubscribeOutcome | string,
  principal?: Principal,
): Promise<string | null> {
  if (outcome !== 'created' && outcome !== 'resubscribed') return null;
  const settings = confirmationEmailOf(audience);
  if (!settings.enabled || !settings.email.from) return null;
  try {
    const from = parseAddressField(settings.email.from).addresses[0];
    if (!from) return null;
    const name = publicName(audience);
    const message: StoredMessage = {
      from,
      to: [{ address: email, name: '' }],
      cc: [],
      bcc: [],
      reply_to: settings.email.reply_to ? parseAddressField(settings.email.reply_to).addresses : [],
      subject: settings.email.subject ?? `You are subscribed to ${name}`,
      html: welcomeEmailHtml(settings.email, name),
      text: welcomeEmailText(settings.email, name),
      headers: { 'Auto-Submitted': 'auto-generated' },
      attachments: [],
    };
    const sender: Principal = principal ?? {
      keyId: null as unknown as string,
      keyHash: '',
      workspaceId: audience.workspace_id,
      scope: 'full',
      sendingDomainId: null,
    };
    const accepted = await acceptMessage(ctx, sender, {
      message,
      fromHeader: settings.email.from,
      meta: null,
      scheduledAt: null,
      tracking: false,
      source: 'api',
    });
    return accepted.rows[0].id;
  } catch (error) {
    ctx.log.warn({ audience: audience.id, error: (error as Error).message }, 'the audience confirmation email was not sent');
    return null;
  }
}
