// One intake into `emails` (docs/architecture.md, "Which folder owns which table"): only
// src/delivery/ inserts email rows or enqueues their delivery jobs; the API, the SMTP relay,
// inbound mail, campaigns and automations all go through src/delivery/intake.ts. A new path that
// writes its own rows would skip the intake's rules (first status, first event, job type).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');
const INTAKE = /^src\/delivery\//;
// Migrations create the table; they never insert rows into it.
const EXEMPT = /^src\/platform\/db\/migrations\//;

const WRITES = [
  { what: "insertInto('emails')", pattern: /insertInto\(\s*['"`]emails['"`]\s*\)/ },
  { what: 'INSERT INTO emails (raw SQL)', pattern: /insert\s+into\s+"?emails"?(?![\w"])/i },
  { what: 'a delivery job enqueued', pattern: /(?:enqueueJobs?|jobInsertPart)\([^;]*?(?:DELIVER_JOB|['"`]email\.deliver|deliverPayload)/ },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

function writersOf(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const path = relative(ROOT, file).split('\\').join('/');
    if (EXEMPT.test(path)) continue;
    const text = readFileSync(file, 'utf8');
    for (const { what, pattern } of WRITES) if (pattern.test(text)) found.push(`${path}: ${what}`);
  }
  return found.sort();
}

test('only src/delivery/ inserts into emails or enqueues delivery jobs', () => {
  const writers = writersOf(sourceFiles(SRC));
  const outside = writers.filter((line) => !INTAKE.test(line));
  assert.deepEqual(outside, [], 'create emails through createEmails (src/delivery/intake.ts)');
  // The check can see what it looks for: the intake itself is found.
  assert.ok(
    writers.some((line) => line.startsWith('src/delivery/intake.ts: ') && line.includes("insertInto('emails')")),
    writers.join('\n'),
  );
  assert.ok(
    writers.some((line) => line.startsWith('src/delivery/intake.ts: ') && line.includes('delivery job')),
    writers.join('\n'),
  );
});
