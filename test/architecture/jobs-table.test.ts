// The jobs table belongs to the platform (src/platform/jobs.ts): features enqueue, find, cancel
// and reschedule their jobs by key through it, and no file outside src/platform/ names the
// table in a query (docs/architecture.md, "Jobs").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

// The table as a Kysely table name ('jobs', 'jobs as j') or in raw SQL (from/into/update/join jobs).
const QUERY_OF_JOBS = [/(['"`])jobs(\s+as\s+\w+)?\1/, /\b(from|into|update|join|table)\s+"?jobs"?\b/i];

/** Lines of `text` that query the jobs table. */
export function jobsTableQueries(text: string): number[] {
  return text
    .split('\n')
    .map((line, i) => {
      if (/^\s*(\*|\/\*|\/\/)/.test(line)) return 0; // a comment line
      return QUERY_OF_JOBS.some((re) => re.test(line.replace(/\s\/\/.*$/, ''))) ? i + 1 : 0;
    })
    .filter((n) => n > 0);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

test('the check finds a query of the jobs table, and not a mention of jobs', () => {
  assert.deepEqual(jobsTableQueries("await tx.selectFrom('jobs').select('id').execute();"), [1]);
  assert.deepEqual(jobsTableQueries('db.deleteFrom("jobs as j")'), [1]);
  assert.deepEqual(jobsTableQueries('await sql`update jobs set run_at = 0`.execute(db);'), [1]);
  assert.deepEqual(jobsTableQueries('const x = 1;\nsql`select id from "jobs" where type = ${t}`'), [2]);
  assert.deepEqual(
    jobsTableQueries(
      "// a comment about selectFrom('jobs')\n * the `jobs` table\nlog.warn({ jobs: n }, 'jobs handed back');\nconst jobs = []; // not selectFrom('jobs')",
    ),
    [],
  );
});

test('no file outside src/platform/ queries the jobs table', () => {
  const offenders = sourceFiles(join(ROOT, 'src'))
    .filter((file) => !relative(ROOT, file).startsWith(join('src', 'platform')))
    .flatMap((file) => jobsTableQueries(readFileSync(file, 'utf8')).map((line) => `${relative(ROOT, file)}:${line}`));
  assert.deepEqual(offenders, [], 'use src/platform/jobs.ts (enqueueJob with a key, findByKey, cancelByKey, rescheduleByKey)');
});
