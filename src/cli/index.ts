// `postlane <command>`: JSON on stdout with --json, readable text otherwise; errors on stderr
// with a non-zero exit (operations.md "Administration CLI").
import { ConfigError } from '../config.ts';
import { WorkspaceError } from '../resources/workspaces/service.ts';
import { serveCommand, migrateCommand } from './serve.ts';
import { workspaceCommand } from './workspace.ts';
import { UsageError } from './usage-error.ts';

export type Command = (args: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  serve: serveCommand,
  migrate: migrateCommand,
  workspace: workspaceCommand,
  domain: async (args) => (await import('./domain.ts')).domainCommand(args),
  demo: async (args) => (await import('./demo.ts')).demoCommand(args),
  contacts: async (args) => (await import('./contacts.ts')).contactsCommand(args),
  user: async (args) => (await import('./user.ts')).userCommand(args),
  delivery: async (args) => (await import('./delivery.ts')).deliveryCommand(args),
  pools: async (args) => (await import('./pools.ts')).poolsCommand(args),
  doctor: async (args) => (await import('./doctor.ts')).doctorCommand(args),
  backup: async (args) => (await import('./backup.ts')).backupCommand(args),
  restore: async (args) => (await import('./backup.ts')).restoreCommand(args),
};

export { UsageError };

const USAGE = `usage: postlane <command>
  serve [--role api|worker|smtp|all]   run the service (what npm start runs)
  migrate                              apply database migrations and exit
  workspace create --name N [--plan payg|pro|business|custom] [--credits N] [--verified] [--member EMAIL]… [--json]
  workspace list [--json]
  workspace update ID [--plan P] [--credits N] [--add-credits N] [--verified true|false] [--member EMAIL]…
                      [--send-rate N] [--daily-limit N] [--feature NAME]… [--json]
  domain approve WORKSPACE_ID DOMAIN [--json]   manual review approval (manually_verified_at), then a DNS check
  demo [--json] [--keep]               end-to-end demonstration on loopback (no internet needed)
  contacts import FILE [--workspace ID] [--audience ID] [--format csv|json] [--json]
                                       import contacts from CSV or JSON (progress on stderr, then a summary)
  contacts export [--workspace ID] [--audience ID] [--search TEXT] [--unsubscribed true|false] [--sort KEY] [--order asc|desc]
                  [--filter KEY.CONDITION=VALUE]… [--out FILE]   the list's filters and sort as CSV (progress on stderr)
  user create --email E --workspace WSP_ID [--role admin|member] [--json]   a dashboard user and a link to set its password
  delivery destinations [--json]       traffic shaping per destination (pace, back-off, counts)
  delivery hold [--workspace ID] [--destination D] [--domain D] [--reason R] [--json]   hold queued deliveries
  delivery holds [--workspace ID] [--json] | delivery release HOLD_ID [--json]
  delivery purge --workspace ID [--domain D] [--destination D] [--json]   cancel queued deliveries
  pools list [--workspace ID] [--json]     IP pools (DELIVERY_IP_POOLS) and which workspace uses which
  pools assign [--workspace ID] [--all P] [--transactional P] [--bulk P] [--json]   assign pools (none removes; no --workspace: every workspace)
  delivery warmup [--json] | delivery warmup start --domain D|--address IP [--schedule NAME] | delivery warmup stop ID|D|IP
                                       warm-up: day N of M, today's cap and sent per destination, deferred backlog
  doctor [--json]                      check DNS, reverse DNS, port 25, TLS, blocklists, SPF/DKIM/DMARC, clock, disk, database;
                                       exit 1 when a blocker is found
  backup --out FILE [--json]           a consistent copy of the database while the server runs (SQLite backup API, or pg_dump)
  restore FILE [--json]                replace the database with a backup (stop the server first; SQLite, or pg_restore)`;

export async function runCli(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) {
    process.stderr.write(`${name && name !== 'help' && name !== '--help' ? `unknown command "${name}"\n` : ''}${USAGE}\n`);
    return name === 'help' || name === '--help' ? 0 : 2;
  }
  try {
    return await command(args);
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      error instanceof WorkspaceError ||
      (error instanceof Error && error.name === 'BackupError')
    ) {
      process.stderr.write(`postlane ${name}: ${error.message}\n`);
      return 2;
    }
    if (error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`postlane ${name}: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`postlane ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
