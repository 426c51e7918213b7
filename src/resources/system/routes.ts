// The operator's view of the server: the doctor's report (what `postlane doctor` prints) over
// HTTP. It runs network probes and describes the server's setup, so it is for admins with a
// full-scope credential; of the domains, it checks the caller's workspace's only.
import type { Resource } from '../../platform/resource.ts';
import { runDoctor } from './doctor/index.ts';
import { SystemHealth } from './schemas.ts';

const tags = ['System'];

export const resource: Resource = {
  name: 'system',
  v2(app, ctx) {
    app.get(
      '/system/health',
      {
        schema: {
          tags,
          summary: 'Deliverability and operations checks of this server (postlane doctor)',
          description:
            "DNS names, forward-confirmed reverse DNS, outbound port 25, the SMTP certificate, DNS blocklists, each domain's SPF, DKIM and DMARC as receivers evaluate them, the bulk-sender rules, the clock, free disk space and the database. Always 200; read `status`.",
          response: { 200: SystemHealth },
        },
        config: { scope: 'full', role: 'admin' },
      },
      async (request) => runDoctor(ctx, request.principal.workspaceId),
    );
  },
};
