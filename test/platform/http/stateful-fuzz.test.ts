// Under fire with real ids: the stateful fuzzer (test/helpers/stateful-fuzz.ts) makes every kind
// of resource, then sends a few thousand valid, mutated and hostile requests that use their real
// ids, over every operation of /openapi.json and the public pages, signed with keys of both
// scopes and dashboard sessions. No request may get a 5xx, a dropped or silent connection, or a
// stack trace or SQL in its answer, and the server must stay up. `npm run bench fuzz` runs
// 100,000 of them. FUZZ_SEED and FUZZ_REQUESTS change the sample (each finding prints its seed
// and request index).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, freshDatabase } from '../../helpers/app.ts';
import { knownOn } from '../../helpers/stateful-fuzz-known.ts';
import { startFuzzTarget, type FuzzTarget } from '../../helpers/stateful-fuzz-target.ts';
import { reportLines, runStatefulFuzz } from '../../helpers/stateful-fuzz.ts';


const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 3000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261207);

let target: FuzzTarget;
before(async () => {
  target = await startFuzzTarget(await freshDatabase());
});
after(() => target?.stop());

test(`${REQUESTS} stateful requests with real ids over every operation and the public pages: no 5xx, no dropped connection, nothing leaked`, async () => {
  const report = await runStatefulFuzz(target, {
    requests: REQUESTS,
    concurrency: 4,
    seed: SEED,
    // Shapes of findings being fixed in files others own, set aside until those fixes are merged
    // (KNOWN_UNTIL_MERGED in test/helpers/stateful-fuzz-known.ts: the lead empties it then).
    known: knownOn(databaseKind),
  });
  const lines = reportLines(report, target);
  console.log(lines.join('\n'));
  const failing = [...report.findings.values()].filter((f) => f.kind === '5xx' || f.kind === 'no answer' || f.kind === 'leak');
  assert.deepEqual(failing.map((f) => `[${f.kind}] ×${f.count} ${f.signature}\n  e.g. ${f.example.slice(0, 600)}`), [], `seed ${SEED}`);
  assert.equal(report.frozeAfter, null, 'the server kept answering');
  assert.ok(report.up, 'the server is still up and healthy');
  // The run reached past the schemas: most operations answered, real ids were used (2xx on items).
  assert.ok(report.operationsReached >= report.operations * 0.9, `${report.operationsReached} of ${report.operations} operations answered`);
  assert.ok((report.statuses.get(200) ?? 0) + (report.statuses.get(201) ?? 0) > REQUESTS * 0.1, lines[2]);
});
