// 100,000 stateful fuzz requests (test/helpers/stateful-fuzz.ts): every kind of resource made
// first, then valid, mutated and hostile requests with their real ids over every operation of
// /openapi.json and the public pages (hosted subscribe/confirm/leave, campaign unsubscribe,
// public forms and their embed script, tracking pixel and click links, dashboard sign-in), with
// API keys of both scopes and dashboard sessions. Prints how many answered 5xx, got no answer,
// leaked a stack trace or SQL, or answered a status their operation does not document (each
// grouped, with a request to reproduce it), the server's RSS over the run, and whether it
// stayed up. SQLite by default; PostgreSQL with BENCH_DATABASE_URL.
//   FUZZ_REQUESTS (100,000), FUZZ_CONCURRENCY (8), FUZZ_SEED, FUZZ_MAX_SECONDS (no limit),
//   FUZZ_SEND_KNOWN=1 to send the shapes of known findings being fixed elsewhere too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scenario } from '../run.ts';
import { freshBenchDatabase } from '../lib.ts';
import { startFuzzTarget } from '../../test/helpers/stateful-fuzz-target.ts';
import { knownOn } from '../../test/helpers/stateful-fuzz-known.ts';
import { reportLines, runStatefulFuzz } from '../../test/helpers/stateful-fuzz.ts';

const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 100_000);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 8);
const SEED = Number(process.env.FUZZ_SEED ?? 20261207);
const MAX_SECONDS = Number(process.env.FUZZ_MAX_SECONDS ?? Infinity);

export const scenario: Scenario = {
  name: 'fuzz',
  description: `${TOTAL.toLocaleString('en')} stateful fuzz requests with real ids over every operation of /openapi.json and the public pages (aim: 0 answers of 5xx, nothing leaked, every request answered, RSS flat)`,
  async run() {
    const dialect = process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite';
    const dataDir = mkdtempSync(join(tmpdir(), 'postlane-fuzz-'));
    const database = await freshBenchDatabase(dataDir);
    const target = await startFuzzTarget({
      url: database.url,
      dataDir,
      drop: async () => {
        await database.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    });
    try {
      const report = await runStatefulFuzz(target, {
        requests: TOTAL,
        concurrency: CONCURRENCY,
        seed: SEED,
        maxSeconds: MAX_SECONDS,
        known: process.env.FUZZ_SEND_KNOWN ? [] : knownOn(dialect),
        progress: (line) => process.stderr.write(`  ${line}\n`),
      });
      return { name: this.name, lines: [`${dialect}, ${CONCURRENCY} connections`, ...reportLines(report, target)] };
    } finally {
      await target.stop();
    }
  },
};
