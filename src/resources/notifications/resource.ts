// Sends the notices queued by notifyWorkspaceOwners: one plain-text message per job, from
// `Postlane <notifications@MAIL_HOSTNAME>` with the null envelope sender (an automatic message
// must never draw a bounce back to us, RFC 3834), over the same SMTP client as email delivery
// (MX lookup through DNS_SERVERS, or SMARTHOST_URL). A temporary failure is retried with the
// job's backoff; a permanent one is logged and dropped. Not DKIM-signed: the service's own
// host has no sending domain of a workspace behind it.
import type { Resource } from '../../platform/resource.ts';
import type { AppContext } from '../../platform/context.ts';
import type { Db } from '../../platform/db/database.ts';
import { registerJobHandler, type Job } from '../../platform/jobs.ts';
import { ksuid } from '../../platform/ids.ts';
import { composeMessage } from '../../mail/compose.ts';
import { createOutboundDelivery, type SmtpDelivery } from '../../mail/smtp-delivery.ts';
import { DELIVER_LEASE_MS } from '../emails/service.ts';
import { NOTIFY_JOB, type NotifyPayload } from './service.ts';

class NoticeSender {
  private smtp: SmtpDelivery | null = null;
  private readonly ctx: AppContext;
  constructor(ctx: AppContext) {
    this.ctx = ctx;
  }

  async send(job: Job<NotifyPayload>): Promise<void> {
    const { to, subject, text } = job.payload;
    const host = this.ctx.config.mailHostname;
    const raw = await composeMessage({
      from: `Postlane <notifications@${host}>`,
      to: [to],
      subject,
      text,
      messageId: `${ksuid()}@${host}`,
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
    this.smtp ??= createOutboundDelivery(this.ctx.config);
    const outcome = await this.smtp.deliver({ from: '', to, raw });
    if (outcome.kind === 'temporary') throw new Error(`notice to ${to} not delivered yet: ${outcome.response}`);
    if (outcome.kind === 'permanent') this.ctx.log.warn({ to, subject, response: outcome.response }, 'a notice to a workspace owner bounced');
  }

  async close(): Promise<void> {
    await this.smtp?.close();
    this.smtp = null;
  }
}

// Handlers are registered process-wide; each running app's sender is found by its database.
const senders = new Map<Db, NoticeSender>();

export const resource: Resource = {
  name: 'notifications',
  registerJobs(ctx) {
    senders.set(ctx.db, new NoticeSender(ctx));
    registerJobHandler(
      NOTIFY_JOB,
      async (job, db) => {
        const sender = senders.get(db);
        if (!sender) throw new Error('no notice sender for this database');
        await sender.send(job as Job<NotifyPayload>);
      },
      // As long as a delivery may take: a lease that ran out mid-send would send it twice.
      { concurrency: 2, leaseMs: DELIVER_LEASE_MS },
    );
  },
  async start(ctx) {
    return async () => {
      const sender = senders.get(ctx.db);
      senders.delete(ctx.db);
      await sender?.close();
    };
  },
};
