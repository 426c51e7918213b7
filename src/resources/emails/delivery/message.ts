// The bytes that go out for one email (one recipient): the stored content composed with this
// copy's Message-ID, tracking applied when the email asks for it, DKIM-signed with the sending
// domain's key; and its envelope sender, the per-email VERP address on the return-path host.
import { composeMessage } from '../../../mail/compose.ts';
import { signMessage } from '../../../mail/dkim.ts';
import { verpAddress } from '../../../mail/verp.ts';
import type { SendingDomain } from '../../domains/service.ts';
import type { EmailRow } from '../objects.ts';
import type { StoredMessage } from '../content.ts';
import { formatAddress } from '../addresses.ts';
import { applyTracking, trackingToken, type TrackedHtml } from './tracking.ts';
import { personalizeMessage, type Personalization } from './personalize.ts';

export interface OutgoingMessage {
  envelopeFrom: string;
  raw: Buffer;
  /** Links and pixel to store before sending (null without tracking). */
  tracked: TrackedHtml | null;
}

/** The fields of an email a build reads (all a build thread is sent of the row). */
export type BuildEmail = Pick<
  EmailRow,
  'id' | 'from' | 'subject' | 'message_id' | 'created_at' | 'scheduled_at' | 'track_loads' | 'track_clicks' | 'content_id'
>;

export interface BuildSecrets {
  verpSecret: Buffer;
  trackingSecret: Buffer;
}

export async function buildOutgoingMessage(
  email: BuildEmail,
  given: StoredMessage,
  domain: SendingDomain,
  secrets: BuildSecrets,
  personal: Personalization | null = null,
): Promise<OutgoingMessage> {
  const stored = personal ? personalizeMessage(email, given, personal) : given;
  let html = stored.html;
  let tracked: TrackedHtml | null = null;
  if (html && (email.track_loads === 1 || email.track_clicks === 1)) {
    tracked = applyTracking(html, {
      host: domain.trackingHost,
      loads: email.track_loads === 1,
      clicks: email.track_clicks === 1,
      token: (slot) => trackingToken(secrets.trackingSecret, email.id, slot),
      untracked: personal?.untracked,
    });
    html = tracked.html;
  }
  const composed = await composeMessage({
    from: email.from,
    // The headers show every To and Cc recipient of the request; Bcc never appears.
    to: stored.to.map(formatAddress),
    cc: stored.cc.map(formatAddress),
    replyTo: stored.reply_to.map(formatAddress),
    subject: email.subject,
    html,
    text: stored.text,
    headers: stored.headers,
    attachments: stored.attachments.map((attachment) => ({
      filename: attachment.filename,
      content: Buffer.from(attachment.content, 'base64'),
      contentType: attachment.content_type,
      contentId: attachment.content_id,
    })),
    messageId: email.message_id,
    date: new Date(email.scheduled_at ?? email.created_at),
    listUnsubscribe: personal?.listUnsubscribe ?? null,
  });
  const raw = await signMessage(composed, { domain: domain.name, selector: domain.dkimSelector, privateKey: domain.dkimPrivateKeyPem });
  return { envelopeFrom: verpAddress(email.id, domain.returnPathDomain, secrets.verpSecret), raw, tracked };
}
