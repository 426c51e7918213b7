// `postlane domain approve WORKSPACE_ID DOMAIN [--json]`: the operator's manual review
// approval of a Pay as you go domain (sets manually_verified_at), followed by a DNS check.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../config.ts';
import { createContext } from '../server.ts';
import { loadResources } from '../resources/index.ts';
import { approveDomain } from '../resources/domains/service.ts';
import { domainObject } from '../resources/domains/objects.ts';
import { withDatabase } from './workspace.ts';
import { UsageError } from './usage-error.ts';

export async function domainCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'approve') throw new UsageError('domain takes approve WORKSPACE_ID DOMAIN');
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { json: { type: 'boolean' } } });
  if (positionals.length !== 2) throw new UsageError('domain approve takes a workspace id and a domain (name or id)');
  const [workspaceId, domain] = positionals;
  const config = loadConfig();
  const row = await withDatabase(async (db) => {
    const ctx = createContext(config, db, pino({ level: config.logLevel }, process.stderr));
    // Event subscribers (webhook fan-out) register here, as in the server, so the approval's
    // domain.updated reaches them in its own transaction.
    for (const resource of await loadResources()) resource.registerJobs?.(ctx);
    return approveDomain(ctx, workspaceId, domain);
  });
  if (values.json) {
    process.stdout.write(`${JSON.stringify(domainObject(row, config))}\n`);
  } else {
    const failing = (['spf', 'dkim', 'return_path'] as const).filter((key) => row[`${key}_status`] !== 'ok');
    process.stdout.write(
      `Approved ${row.name} (${row.id}) at ${row.manually_verified_at}: verification_status=${row.verification_status}` +
        (failing.length
          ? `\nNot verified yet; failing records: ${failing.map((key) => `${key} (${row[`${key}_status`]}: ${row[`${key}_error`] ?? '-'})`).join(', ')}`
          : '') +
        '\n',
    );
  }
  return 0;
}
