// The two SMTP listeners (role `smtp`): the submission relay and the inbound MX. Port 0
// disables a listener. The bound ports are kept in `smtpListeners` for whoever started this
// process (tests, the demo) to read. A certificate from files is reloaded when they change.
import { X509Certificate } from 'node:crypto';
import { recordTlsCertificateExpiry } from '../../platform/metrics.ts';
import type { Resource } from '../../platform/resource.ts';
import { startInbound } from '../../smtp/inbound.ts';
import { startSubmission } from '../../smtp/submission.ts';
import { loadTlsMaterial } from '../../smtp/tls.ts';
import { watchTlsFiles } from '../../smtp/tls-reload.ts';

export interface SmtpListenerPorts {
  submission: number | null;
  submissionTls: number | null;
  inbound: number | null;
}

/** The ports of the listeners this process started last (null: not listening). */
export const smtpListeners: SmtpListenerPorts = { submission: null, submissionTls: null, inbound: null };

export const resource: Resource = {
  name: 'smtp',
  async start(ctx, roles) {
    const { config } = ctx;
    if (!roles.has('smtp')) return;
    if (config.smtpSubmissionPort === 0 && !config.smtpSubmissionTlsPort && config.smtpInboundPort === 0) return;
    const tls = loadTlsMaterial(config);
    const submission = await startSubmission(ctx, tls, config.smtpHost);
    let inbound;
    try {
      inbound = await startInbound(ctx, tls, config.smtpHost);
    } catch (error) {
      await submission.close();
      throw error;
    }
    const ports: SmtpListenerPorts = { submission: submission.port, submissionTls: submission.tlsPort, inbound: inbound?.port ?? null };
    Object.assign(smtpListeners, ports);
    ctx.log.info({ ...ports, tls: tls.source }, 'SMTP listeners started');
    recordTlsCertificateExpiry(new Date(new X509Certificate(tls.cert).validTo));
    const servers = [...submission.servers, ...(inbound ? [inbound.server] : [])];
    // New sessions (STARTTLS and implicit TLS) take the new context; open ones keep theirs.
    const watcher =
      tls.files &&
      watchTlsFiles(tls.files, tls, ctx.log.child({ component: 'smtp-tls' }), (pair) => {
        for (const server of servers) server.updateSecureContext({ key: pair.key, cert: pair.cert });
        recordTlsCertificateExpiry(new Date(pair.x509.validTo));
      });
    return async () => {
      watcher?.close();
      await Promise.all([submission.close(), inbound?.close()]);
      // Forget the ports unless a later start in this process replaced them.
      if (smtpListeners.submission === ports.submission && smtpListeners.inbound === ports.inbound) {
        Object.assign(smtpListeners, { submission: null, submissionTls: null, inbound: null });
      }
    };
  },
};
