// The SMTP submission relay (https://emailit.com/docs/smtp.md): STARTTLS on SMTP_SUBMISSION_PORT
// and, when set, implicit TLS on SMTP_SUBMISSION_TLS_PORT. A client logs in with AUTH PLAIN or
// LOGIN, any username and an API key as password, and each message then goes through the very
// pipeline of POST /emails (acceptMessage: From domain, key restriction, workspace verification,
// size, suppressions, limits, credits, one transaction), so afterwards it cannot be told from an
// API send except by `source: smtp`. Rate limits count one unit per transaction, checked at MAIL
// FROM and counted with the emails.
//
// A client that lost the reply to DATA (the server was killed, the connection dropped) sends
// the message again. So the relay remembers each accepted message by its Message-ID and its
// envelope for 24 hours: the same message with the same envelope is answered with the first
// one's `250 … queued as em_…` and not sent again, and while the first is still being accepted
// (another connection, another process) the second is answered 451, to be retried. This is the
// Idempotency-Key mechanism of the API (platform/idempotency.ts) with a key of the relay's own:
// a lease that dies with its process, a stored reply that commits with the emails.
import { createHash } from 'node:crypto';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import type { AppContext } from '../platform/context.ts';
import type { Principal } from '../platform/http/auth.ts';
import { checkSendLimits } from '../platform/limits.ts';
import { ApiError } from '../platform/http/errors.ts';
import { beginIdempotent, completeIdempotent, releaseIdempotent } from '../platform/idempotency.ts';
import { acceptMessage } from '../resources/emails/accept.ts';
import { inSpan, SpanKind } from '../platform/tracing.ts';
import { isEmailAddress } from '../resources/emails/addresses.ts';
import { hasAllowedExtension } from '../resources/emails/attachments.ts';
import { MAX_MESSAGE_BYTES } from '../resources/emails/content.ts';
import { getWorkspace } from '../resources/workspaces/service.ts';
import { listen, readMessage, type Listening } from './listen.ts';
import { normalizeAddress, parseMime, submissionMessage } from './message.ts';
import { acceptErrorReply, limitReply, replies, smtpError } from './replies.ts';
import type { TlsMaterial } from './tls.ts';
import { refuseWhileDraining } from '../platform/lifecycle.ts';

/** Recipients one transaction may name: the API's 50 per field, for to, cc and bcc. */
export const MAX_RECIPIENTS = 150;
/** Raw message bytes accepted at DATA (and announced with SIZE): the API's 40 MB rule. */
export const SUBMISSION_MAX_BYTES = MAX_MESSAGE_BYTES;

/**
 * The key a relayed message is remembered by: its Message-ID with the envelope (MAIL FROM and
 * the RCPT TO addresses, in any order, domains case-insensitive). Null without a Message-ID:
 * such a message cannot be recognised when it comes again. The `smtp:` prefix lies outside the
 * API's Idempotency-Key alphabet, so a relay key never meets an API key of the workspace.
 */
export function submissionKey(messageId: string | undefined, mailFrom: string, recipients: string[]): string | null {
  const id = messageId?.trim();
  if (!id) return null;
  const envelope = [normalizeAddress(mailFrom), ...[...new Set(recipients.map(normalizeAddress))].sort()];
  return `smtp:${createHash('sha256')
    .update(JSON.stringify([id, ...envelope]))
    .digest('base64url')}`;
}

const inProgressReply = () =>
  smtpError(451, '4.3.0 A message with this Message-ID and envelope is still being accepted; try again shortly');

export interface SubmissionListeners {
  port: number | null;
  tlsPort: number | null;
  /** The listening servers (to hand them a renewed certificate). */
  servers: SMTPServer[];
  close(): Promise<void>;
}

export function createSubmissionServer(ctx: AppContext, tls: TlsMaterial, implicitTls: boolean): SMTPServer {
  const principals = new WeakMap<SMTPServerSession, Principal>();
  const log = ctx.log.child({ component: 'smtp-submission' });

  const options: SMTPServerOptions = {
    name: ctx.config.mailHostname,
    banner: 'Postlane ESMTP submission',
    key: tls.key,
    cert: tls.cert,
    secure: implicitTls,
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: false,
    authRequiredMessage: '5.7.0 Authentication required',
    allowInsecureAuth: false, // an API key never crosses the network in clear text
    disabledCommands: [],
    size: SUBMISSION_MAX_BYTES,
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 2000,

    onAuth(auth, session, callback) {
      if (auth.method !== 'PLAIN' && auth.method !== 'LOGIN') return callback(replies.authFailed());
      ctx.auth.authenticate(auth.password ?? null).then(
        (principal) => {
          // An Events Only key sends events and nothing else: no mail
          // (https://emailit.com/docs/developers/api-keys/#scopes).
          if (!principal || principal.scope === 'events') return callback(replies.authFailed());
          principals.set(session, principal);
          callback(null, { user: principal.keyId });
        },
        (error) => {
          log.error({ err: error }, 'SMTP AUTH lookup failed');
          callback(replies.authUnavailable());
        },
      );
    },

    onMailFrom(_address, session, callback) {
      const principal = principals.get(session);
      // smtp-server drops the login when TLS starts afterwards; the key must match the login.
      if (!principal || session.user !== principal.keyId) return callback(smtpError(530, '5.7.0 Authentication required'));
      (async () => {
        const workspace = await getWorkspace(ctx.db, principal.workspaceId);
        if (!workspace) return replies.localError();
        const check = await checkSendLimits(ctx.db, workspace);
        return check.ok ? undefined : limitReply(check);
      })().then(
        (refusal) => callback(refusal),
        (error) => {
          log.error({ err: error }, 'SMTP MAIL FROM check failed');
          callback(replies.localError());
        },
      );
    },

    onRcptTo(address, session, callback) {
      if (!isEmailAddress(address.address)) return callback(replies.badRecipient());
      const known = session.envelope.rcptTo.some((r) => r.address.toLowerCase() === address.address.toLowerCase());
      if (!known && session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(replies.tooManyRecipients(MAX_RECIPIENTS));
      const principal = principals.get(session)!;
      // An unverified workspace may send only to its members: refused per recipient here (the
      // others still go), and checked again by acceptMessage.
      getWorkspace(ctx.db, principal.workspaceId).then(
        (workspace) => {
          if (!workspace) return callback(replies.localError());
          if (!workspace.verified && !workspace.members.includes(address.address.toLowerCase())) {
            return callback(
              smtpError(
                550,
                "5.7.1 Recipient not allowed: this workspace is not verified yet and can send only to its members' account emails",
              ),
            );
          }
          callback();
        },
        (error) => {
          log.error({ err: error }, 'SMTP RCPT TO check failed');
          callback(replies.localError());
        },
      );
    },

    onData(stream, session, callback) {
      const principal = principals.get(session)!;
      const recipients = session.envelope.rcptTo.map((r) => normalizeAddress(r.address));
      // A span while tracing is on: the root of the trace of the mail this transaction sends.
      inSpan(
        'smtp.submission',
        { kind: SpanKind.SERVER, attributes: { 'postlane.workspace_id': principal.workspaceId, 'postlane.recipients': recipients.length } },
        async () => {
          const { raw, oversized } = await readMessage(stream, SUBMISSION_MAX_BYTES);
          if (oversized) throw replies.tooLarge();
          const parsed = await parseMime(raw);
          const parts = submissionMessage(parsed, recipients);
          if (!parts) throw replies.noFrom();
          // The API's attachment rule: a named file must have an allowed extension.
          const refused = parsed.attachments.find((a) => a.filename && !hasAllowedExtension(a.filename));
          if (refused) throw smtpError(554, `5.6.1 Attachment type not allowed: ${refused.filename!.replace(/[^\x20-\x7e]/g, '?')}`);
          const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          const key = submissionKey(parsed.messageId, mailFrom, recipients);
          let claim: Awaited<ReturnType<typeof beginIdempotent>> | null = null;
          if (key) {
            try {
              claim = await beginIdempotent(ctx.db, principal.workspaceId, key);
            } catch (error) {
              throw error instanceof ApiError && error.status === 409 ? inProgressReply() : replies.localError();
            }
            // Accepted before: the same answer, nothing sent again.
            if (claim.kind === 'replay') return `2.0.0 OK: queued as ${(claim.body as { id: string }).id}`;
          }
          const token = claim?.kind === 'new' ? claim.token : null;
          const accepted = await acceptMessage(ctx, principal, {
            message: parts.message,
            fromHeader: parts.fromHeader,
            meta: null,
            scheduledAt: null,
            tracking: undefined, // the domain's tracking settings, as an API send without `tracking`
            source: 'smtp',
            // PostgreSQL text cannot hold NUL; nothing legitimate in a message needs one.
            raw: raw.toString('utf8').replace(/\0/g, ''),
            limitUnits: 1, // one per transaction
            inTransaction: async (tx, rows) => {
              if (key && token) await completeIdempotent(tx, principal.workspaceId, key, token, 250, { id: rows[0].id });
            },
          }).catch(async (error: unknown) => {
            if (key && token) await releaseIdempotent(ctx.db, principal.workspaceId, key, token);
            // The lease was lost (held past 15 minutes and taken over): nothing was stored.
            if (error instanceof ApiError && error.status === 409) throw inProgressReply();
            throw error;
          });
          return `2.0.0 OK: queued as ${accepted.rows[0].id}`;
        },
      ).then(
        (reply) => callback(null, reply),
        (error) => {
          if (error instanceof Error && 'responseCode' in error) return callback(error);
          const reply = acceptErrorReply(error);
          if (reply.responseCode === 451) log.error({ err: error }, 'SMTP submission failed');
          callback(reply);
        },
      );
    },
  };
  options.onConnect = refuseWhileDraining(ctx);
  return new SMTPServer(options);
}

/** Starts the relay on its STARTTLS port and, when configured, its implicit-TLS port. */
export async function startSubmission(ctx: AppContext, tls: TlsMaterial, host: string): Promise<SubmissionListeners> {
  const started: Listening[] = [];
  let port: number | null = null;
  let tlsPort: number | null = null;
  try {
    if (ctx.config.smtpSubmissionPort !== 0) {
      const listening = await listen(createSubmissionServer(ctx, tls, false), ctx.config.smtpSubmissionPort, host);
      started.push(listening);
      port = listening.port;
    }
    if (ctx.config.smtpSubmissionTlsPort) {
      const listening = await listen(createSubmissionServer(ctx, tls, true), ctx.config.smtpSubmissionTlsPort, host);
      started.push(listening);
      tlsPort = listening.port;
    }
  } catch (error) {
    await Promise.all(started.map((l) => l.close()));
    throw error;
  }
  return {
    port,
    tlsPort,
    servers: started.map((l) => l.server),
    close: async () => void (await Promise.all(started.map((l) => l.close()))),
  };
}
