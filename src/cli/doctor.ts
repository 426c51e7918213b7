// `postlane doctor [--json]`: the checks of src/resources/system/doctor against this
// environment. Exit status 1 when a blocker (a failed check) is found, 0 otherwise.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../platform/db/database.ts';
import { runDoctor, type DoctorReport } from '../resources/system/doctor/index.ts';

const MARK = { pass: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: 'skip' } as const;

export function formatReport(report: DoctorReport): string {
  const lines = report.checks.map(
    (check) => `${MARK[check.status]}  ${check.id}: ${check.found}${check.fix ? `\n      fix: ${check.fix}` : ''}`,
  );
  const blockers = report.checks.filter((check) => check.status === 'fail').length;
  const warnings = report.checks.filter((check) => check.status === 'warn').length;
  lines.push(
    '',
    blockers > 0
      ? `${blockers} blocker(s), ${warnings} warning(s): mail will not be delivered reliably until the blockers are fixed.`
      : `No blockers, ${warnings} warning(s).`,
  );
  return `${lines.join('\n')}\n`;
}

export async function doctorCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' } } });
  const config = loadConfig();
  // No migration first: whether migrations are applied is one of the checks.
  const database = openDatabase(config.databaseUrl, { poolSize: 2 });
  try {
    const report = await runDoctor({ db: database.db, config });
    process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : formatReport(report));
    return report.status === 'fail' ? 1 : 0;
  } finally {
    await database.close();
  }
}
