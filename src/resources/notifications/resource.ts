// Sends the notices queued by notifyWorkspaceOwners: one plain-text message per job, from
// `Postlane <notifications@MAIL_HOSTNAME>` with the null envelope sender (an automatic message
// must never draw a bounce back to us, RFC 3834), over the same SMTP client as email delivery
// (MX lookup through DNS_SERVERS, or SMARTHOST_URL). A temporary failure is retried with the
// job's backoff; a permanent one is logged and dropped. Not DKIM-signed: the service's own
// host has no sending domain of a workspace behind it.
import type { Resource } from '../../platform/resource.ts';
import type { AppContext } from '../../platform/context.ts';
import { jobHandler, type Job } from '../../platform/jobs.ts';
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
    if (outcome.kind === 'permanent')
      this.ctx.log.warn({ to, subject, response: outcome.response }, 'a notice to a workspace owner bounced');
  }

  async close(): Promise<void> {
    await this.smtp?.close();
    this.smtp = null;
  }
}

export const resource: Resource = {
  name: 'notifications',
  jobs(ctx) {
    const sender = new NoticeSender(ctx);
    return {
      handlers: [
        // As long as a delivery may take: a lease that ran out mid-send would send it twice.
        jobHandler(NOTIFY_JOB, (job) => sender.send(job as Job<NotifyPayload>), { concurrency: 2, leaseMs: DELIVER_LEASE_MS }),
      ],
      close: () => sender.close(),
    };
  },
};
