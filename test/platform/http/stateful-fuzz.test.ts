// Under fire with real ids: the stateful fuzzer (test/helpers/stateful-fuzz.ts) makes every kind
// of resource, then sends valid, mutated and hostile requests that use their real ids (up to
// 3,000 for 30 s: a few hundred on a loaded 2-core machine) over every operation of
// /openapi.json and the public pages, signed with keys of both scopes and dashboard sessions.
// No request may get a 5xx, a dropped or silent connection, or a stack trace or SQL in its
// answer, and the server must stay up. `npm run bench fuzz` runs 100,000 of them. FUZZ_SEED and FUZZ_REQUESTS change the sample (each finding prints its seed
// and request index).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, freshDatabase } from '../../helpers/app.ts';
import { knownOn } from '../../helpers/stateful-fuzz-known.ts';
import { startFuzzTarget, type FuzzTarget } from '../../helpers/stateful-fuzz-target.ts';
import { buildWorld, reportLines, runStatefulFuzz } from '../../helpers/stateful-fuzz.ts';
import type { World } from '../../helpers/stateful-fuzz-world.ts';

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 3000);
/** The sending stops after this long (on a loaded 2-core machine a few hundred requests fit). */
const MAX_SECONDS = Number(process.env.FUZZ_MAX_SECONDS ?? 30);
const SEED = Number(process.env.FUZZ_SEED ?? 20261207);

let target: FuzzTarget;
let world: World;
/** A loaded machine can take minutes to start a server and make the world: the run stops on time by itself. */
const SLOW = { timeout: 600_000 };

before(async () => {
  target = await startFuzzTarget(await freshDatabase());
  // Two of every kind, the sessions and the mail with the public pages' links.
  world = await buildWorld(target, 2);
}, SLOW);
after(() => target?.stop());

test(
  `up to ${REQUESTS} stateful requests (${MAX_SECONDS} s at most) with real ids over every operation and the public pages: no 5xx, no dropped connection, nothing leaked`,
  SLOW,
  async () => {
    const report = await runStatefulFuzz(target, {
      requests: REQUESTS,
      concurrency: 4,
      seed: SEED,
      maxSeconds: MAX_SECONDS,
      world,
      // Shapes of findings being fixed in files others own, set aside until those fixes are merged
      // (KNOWN_UNTIL_MERGED in test/helpers/stateful-fuzz-known.ts: the lead empties it then).
      known: knownOn(databaseKind),
    });
    const lines = reportLines(report, target);
    console.log(lines.join('\n'));
    const failing = [...report.findings.values()].filter((f) => f.kind === '5xx' || f.kind === 'no answer' || f.kind === 'leak');
    assert.deepEqual(
      failing.map((f) => `[${f.kind}] ×${f.count} ${f.signature}\n  e.g. ${f.example.slice(0, 600)}`),
      [],
      `seed ${SEED}`,
    );
    assert.equal(report.frozeAfter, null, 'the server kept answering');
    assert.ok(report.up, 'the server is still up and healthy');
    // The run reached past the schemas: many operations answered, and real ids were used (2xx).
    assert.ok(report.sent >= Math.min(REQUESTS, 25), lines[0]);
    assert.ok(
      report.operationsReached >= Math.min(report.operations * 0.5, report.sent / 3),
      `${report.operationsReached} of ${report.operations} operations answered`,
    );
    assert.ok((report.statuses.get(200) ?? 0) + (report.statuses.get(201) ?? 0) > report.sent * 0.1, lines[2]);
  },
);
