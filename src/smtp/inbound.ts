// The inbound MX (SMTP_INBOUND_PORT). It accepts mail for exactly two kinds of address and
// refuses every other recipient at RCPT with 550 5.1.1 (so it is never an open relay and
// never a backscatter source):
// (a) VERP return paths `b+<email id>.<mac>@<return-path host>`: DSNs and ARF reports about
//     mail Postlane sent. The MAC proves the address is ours; the report then bounces or
//     marks as complained exactly that email (outcomes.ts: status, event, suppression).
// (b) any local part at a verified domain's inbound host `<inbound_key>.<domain>`: stored as
//     an inbound email (type inbound, status received, 1 credit each), with SPF, DKIM and
//     DMARC checked by mailauth through DNS_SERVERS and written on top of the message as
//     Authentication-Results, and `email.received` emitted (https://emailit.com/docs/inbound.md).
// (c) a domain's DMARC report address `dmarc-<random>@MAIL_HOSTNAME` while the domain collects
//     reports: the reports in the message are stored for the domain (resources/dmarc/intake.ts).
// (d) a campaign email's List-Unsubscribe mailto `b+u-<email id>.<mac>@<return-path host>`:
//     its recipient is unsubscribed, whatever the message says (resources/campaigns/unsubscribe.ts).
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import type { AppContext } from '../platform/context.ts';
import { getCredits, spendCredits } from '../platform/credits.ts';
import { createResolver } from '../platform/dns.ts';
import { ApiError } from '../platform/http/errors.ts';
import { newId } from '../platform/ids.ts';
import { applyBounce, applyComplaint } from '../resources/emails/delivery/outcomes.ts';
import { parseBounce, type BounceReport } from '../mail/bounces.ts';
import { parseVerpAddress } from '../mail/verp.ts';
import { domainOf, formatAddress } from '../resources/emails/addresses.ts';
import { MAX_MESSAGE_BYTES, type StoredMessage } from '../resources/emails/content.ts';
import { createEmails } from '../delivery/intake.ts';
import { findDomainByHost } from '../resources/domains/service.ts';
import { findReportMailbox, receiveReportMail, type ReportMailbox } from '../resources/dmarc/intake.ts';
import { UNSUBSCRIBE_MAILBOX_PREFIX, unsubscribeByEmail } from '../resources/campaigns/unsubscribe.ts';
import { listen, readMessage, type Listening } from './listen.ts';
import { inboundMessage, normalizeAddress, parseMime } from './message.ts';
import { replies, smtpError } from './replies.ts';
import type { TlsMaterial } from './tls.ts';
import { refuseWhileDraining } from '../platform/lifecycle.ts';

export const INBOUND_MAX_BYTES = MAX_MESSAGE_BYTES;
export const INBOUND_MAX_RECIPIENTS = 100;

type Target =
  | { kind: 'report'; emailId: string }
  /** A report to a return-path host whose local part is no (valid) VERP address: tied by the returned message's headers. */
  | { kind: 'loose-report'; workspaceId: string | null }
  | { kind: 'inbound'; workspaceId: string; domainId: string }
  | { kind: 'dmarc'; mailbox: ReportMailbox }
  | { kind: 'unsubscribe'; emailId: string };

const insufficientStorage = () => smtpError(452, '4.3.1 Insufficient system storage, try again later');

/** What a recipient address is to us, or null (refused). */
async function classify(ctx: AppContext, address: string): Promise<Target | { refuse: Error } | null> {
  const verp = parseVerpAddress(address, ctx.verpSecret);
  if (verp?.id.startsWith(UNSUBSCRIBE_MAILBOX_PREFIX)) {
    // A campaign's List-Unsubscribe mailto (campaigns/unsubscribe.ts): its MAC proved it ours.
    return { kind: 'unsubscribe', emailId: verp.id.slice(UNSUBSCRIBE_MAILBOX_PREFIX.length) };
  }
  if (verp) {
    const email = await ctx.db
      .selectFrom('emails')
      .select(['id'])
      .where('id', '=', verp.id)
      .where('type', '=', 'outbound')
      .executeTakeFirst();
    return email ? { kind: 'report', emailId: email.id } : null;
  }
  const mailbox = await findReportMailbox(ctx.db, address, ctx.config.mailHostname);
  if (mailbox) return { kind: 'dmarc', mailbox };
  const domain = await findDomainByHost(ctx.db, domainOf(address));
  // Reports some MTAs send to a mangled return path (or postmaster@) of one of our return-path hosts.
  // A VERP-shaped address whose MAC fails stays refused (forged); other local parts are read.
  const verpShaped = /^b\+/i.test(address);
  if (!verpShaped && (domain?.role === 'return_path' || domainOf(address).toLowerCase() === ctx.config.returnPathHost.toLowerCase())) {
    return { kind: 'loose-report', workspaceId: domain?.role === 'return_path' ? domain.workspaceId : null };
  }
  if (!domain || domain.role !== 'inbound' || !domain.verified) return null;
  // Each received message costs a credit: an empty balance is a temporary refusal, so the
  // sender's queue delivers it once credits are added (without telling strangers why).
  if ((await getCredits(ctx.db, domain.workspaceId)) < 1) return { refuse: insufficientStorage() };
  return { kind: 'inbound', workspaceId: domain.workspaceId, domainId: domain.domainId };
}

/** Applies a DSN or ARF report to the email its VERP address named. */
async function applyReport(ctx: AppContext, emailId: string, report: BounceReport): Promise<void> {
  if (report.kind === 'bounce') {
    await applyBounce(ctx.db, emailId, {
      reason: report.diagnostic ?? 'Bounce report received',
      status: report.status ?? undefined,
      diagnostic: report.diagnostic ?? undefined,
      hard: report.hard,
      bounceReason: report.reason ?? undefined,
    });
  } else if (report.kind === 'complaint') {
    await applyComplaint(ctx.db, emailId, {
      reason: `Spam complaint${report.feedbackType ? ` (feedback type ${report.feedbackType})` : ''}`,
      feedbackType: report.feedbackType ?? undefined,
    });
  }
  // Delay notices (still trying), auto-replies (never bounces), success DSNs and unreadable
  // mail change nothing.
}

/**
 * The email a report sent to no VERP address is about: the returned message's envelope sender
 * when it is one of our VERP addresses (its MAC proves it), else the returned Message-ID when
 * exactly one email has it (in the workspaces of the return-path hosts, when known).
 */
async function reportedEmail(ctx: AppContext, report: BounceReport, workspaceIds: Array<string | null>): Promise<string | null> {
  const workspaces = [...new Set(workspaceIds)];
  const scoped = !workspaces.includes(null);
  const verp = report.originalSender ? parseVerpAddress(report.originalSender, ctx.verpSecret) : null;
  if (verp && !verp.id.startsWith(UNSUBSCRIBE_MAILBOX_PREFIX)) {
    let query = ctx.db.selectFrom('emails').select(['id']).where('id', '=', verp.id).where('type', '=', 'outbound');
    if (scoped) query = query.where('workspace_id', 'in', workspaces as string[]);
    const email = await query.executeTakeFirst();
    if (email) return email.id;
  }
  if (!report.originalMessageId) return null;
  let query = ctx.db.selectFrom('emails').select(['id']).where('message_id', '=', report.originalMessageId).where('type', '=', 'outbound');
  if (scoped) query = query.where('workspace_id', 'in', workspaces as string[]);
  const matched = await query.limit(2).execute();
  // Only an unambiguous match is applied.
  return matched.length === 1 ? matched[0].id : null;
}

/** The trace field an MX adds (RFC 5321 §4.4). */
function receivedHeader(ctx: AppContext, session: SMTPServerSession, recipients: string[]): string {
  const helo = session.hostNameAppearsAs || 'unknown';
  const protocol = session.secure ? 'ESMTPS' : 'ESMTP';
  const recipient = recipients.length === 1 ? `\r\n\tfor <${recipients[0]}>` : '';
  return `Received: from ${helo} ([${session.remoteAddress}])\r\n\tby ${ctx.config.mailHostname} (Postlane) with ${protocol} id ${session.id}${recipient};\r\n\t${new Date().toUTCString().replace('GMT', '+0000')}\r\n`;
}

/** SPF, DKIM and DMARC of a received message, as header fields to put on top of it. */
async function authenticationHeaders(ctx: AppContext, session: SMTPServerSession, raw: Buffer): Promise<string> {
  const resolver = createResolver(ctx.config.dnsServers, { timeoutMs: ctx.config.dnsTimeoutMs });
  try {
    // mailauth (about 9 MB of heap) loads with the first received message.
    const { authenticate } = await import('mailauth');
    const result = await authenticate(raw, {
      ip: session.remoteAddress.replace(/^::ffff:/, ''),
      helo: session.hostNameAppearsAs,
      sender: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      mta: ctx.config.mailHostname,
      resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<never>,
      disableBimi: true,
    });
    return result.headers;
  } catch (error) {
    ctx.log.warn({ err: error }, 'inbound authentication checks failed');
    return `Authentication-Results: ${ctx.config.mailHostname}; none (checks could not run)\r\n`;
  }
}

/** Stores one inbound email per recipient (one content per workspace) in one transaction. */
async function storeInbound(
  ctx: AppContext,
  session: SMTPServerSession,
  raw: Buffer,
  targets: Array<{ address: string; workspaceId: string; domainId: string }>,
): Promise<string[]> {
  const stamped = Buffer.concat([
    Buffer.from(
      receivedHeader(
        ctx,
        session,
        targets.map((t) => t.address),
      ) + (await authenticationHeaders(ctx, session, raw)),
    ),
    raw,
  ]);
  const parsed = await parseMime(stamped);
  const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
  const message: StoredMessage = inboundMessage(parsed, envelopeFrom || null);
  const kinds = new Map<string, 'to' | 'cc'>();
  for (const entry of message.cc) kinds.set(entry.address.toLowerCase(), 'cc');
  for (const entry of message.to) kinds.set(entry.address.toLowerCase(), 'to');
  const messageId = parsed.messageId && /^<[^<>\s]+>$/.test(parsed.messageId.trim()) ? parsed.messageId.trim() : null;
  const rawText = stamped.toString('utf8').replace(/\0/g, '');
  const size = stamped.length;

  const byWorkspace = new Map<string, typeof targets>();
  for (const target of targets) byWorkspace.set(target.workspaceId, [...(byWorkspace.get(target.workspaceId) ?? []), target]);
  const ids: string[] = [];
  await ctx.db.transaction().execute(async (tx) => {
    for (const [workspaceId, group] of byWorkspace) {
      await spendCredits(tx, workspaceId, group.length); // 1 credit per received email
      // One content per workspace; each copy keeps the sender's Message-ID (else one of ours)
      // and records whether it was addressed in To, Cc or neither (Bcc).
      const { rows } = await createEmails(tx, {
        workspaceId,
        source: 'inbound',
        contentId: newId('emc'),
        content: { message: JSON.stringify(message), raw: rawText, size },
        from: message.from.address ? formatAddress(message.from) : envelopeFrom,
        fromAddress: message.from.address,
        subject: message.subject,
        sendingDomainId: null,
        messageIdHost: ctx.config.mailHostname,
        messageId,
        size,
        meta: null,
        recipients: group.map(({ address, domainId }) => ({
          to: address,
          kind: kinds.get(address.toLowerCase()) ?? 'bcc',
          sendingDomainId: domainId,
        })),
      });
      ids.push(...rows.map((row) => row.id));
    }
  });
  return ids;
}

export function createInboundServer(ctx: AppContext, tls: TlsMaterial): SMTPServer {
  const targets = new WeakMap<SMTPServerSession, Map<string, Target>>();
  const log = ctx.log.child({ component: 'smtp-inbound' });

  const options: SMTPServerOptions = {
    name: ctx.config.mailHostname,
    banner: 'Postlane ESMTP',
    key: tls.key,
    cert: tls.cert,
    secure: false, // STARTTLS offered, as MX hosts do
    disabledCommands: ['AUTH'],
    authOptional: true,
    size: INBOUND_MAX_BYTES,
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 2000,

    onMailFrom(_address, session, callback) {
      targets.set(session, new Map()); // a new transaction
      callback();
    },

    onRcptTo(address, session, callback) {
      const seen = targets.get(session) ?? new Map<string, Target>();
      targets.set(session, seen);
      const normalized = normalizeAddress(address.address);
      if (!seen.has(normalized.toLowerCase()) && seen.size >= INBOUND_MAX_RECIPIENTS)
        return callback(replies.tooManyRecipients(INBOUND_MAX_RECIPIENTS));
      classify(ctx, normalized).then(
        (target) => {
          if (!target) return callback(replies.unknownRecipient());
          if ('refuse' in target) return callback(target.refuse);
          seen.set(normalized.toLowerCase(), target);
          callback();
        },
        (error) => {
          log.error({ err: error }, 'inbound RCPT TO lookup failed');
          callback(replies.localError());
        },
      );
    },

    onData(stream, session, callback) {
      const seen = targets.get(session) ?? new Map<string, Target>();
      const recipients = session.envelope.rcptTo.map((r) => normalizeAddress(r.address));
      (async () => {
        const { raw, oversized } = await readMessage(stream, INBOUND_MAX_BYTES);
        if (oversized) throw replies.tooLarge(INBOUND_MAX_BYTES);
        const reports: string[] = [];
        const mailboxes = new Map<string, ReportMailbox>();
        const inbound: Array<{ address: string; workspaceId: string; domainId: string }> = [];
        for (const address of recipients) {
          const target = seen.get(address.toLowerCase());
          if (target?.kind === 'report') reports.push(target.emailId);
          else if (target?.kind === 'inbound') inbound.push({ address, workspaceId: target.workspaceId, domainId: target.domainId });
          else if (target?.kind === 'dmarc') mailboxes.set(target.mailbox.domainId, target.mailbox);
          else if (target?.kind === 'unsubscribe') await unsubscribeByEmail(ctx, target.emailId);
        }
        for (const mailbox of mailboxes.values()) await receiveReportMail(ctx.db, mailbox, raw);
        const loose = recipients
          .map((address) => seen.get(address.toLowerCase()))
          .filter((t): t is Extract<Target, { kind: 'loose-report' }> => t?.kind === 'loose-report');
        if (reports.length > 0 || loose.length > 0) {
          const report = await parseBounce(raw);
          for (const emailId of new Set(reports)) await applyReport(ctx, emailId, report);
          // No VERP recipient (feedback loops report to the address registered with them):
          // the returned message names its email.
          if (reports.length === 0) {
            const emailId = await reportedEmail(
              ctx,
              report,
              loose.map((t) => t.workspaceId),
            );
            if (emailId) await applyReport(ctx, emailId, report);
          }
        }
        const ids = inbound.length > 0 ? await storeInbound(ctx, session, raw, inbound) : [];
        return ids.length > 0 ? `2.0.0 OK: queued as ${ids[0]}` : '2.0.0 OK';
      })().then(
        (reply) => callback(null, reply),
        (error) => {
          if (error instanceof Error && 'responseCode' in error) return callback(error);
          if (error instanceof ApiError && error.status === 402) return callback(insufficientStorage());
          log.error({ err: error }, 'inbound message could not be processed');
          callback(replies.localError());
        },
      );
    },
  };
  options.onConnect = refuseWhileDraining(ctx);
  return new SMTPServer(options);
}

export async function startInbound(ctx: AppContext, tls: TlsMaterial, host: string): Promise<Listening | null> {
  if (ctx.config.smtpInboundPort === 0) return null;
  return listen(createInboundServer(ctx, tls), ctx.config.smtpInboundPort, host);
}
