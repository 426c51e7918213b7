// `npm run bench [scenario…]`: runs each scenario in bench/scenarios/ and prints its figures
// as ratios against the baseline it names, measured in the same run on the same machine.
// Servers run in child processes so that the load generator does not share their event loop;
// with several scenarios, each runs in a process of its own, so that none inherits another's
// heap, JIT state or leftover timers (the webhooks scenario runs Postlane in-process).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ScenarioResult {
  name: string;
  lines: string[];
}
export interface Scenario {
  name: string;
  description: string;
  run(options: { seconds: number; connections: number }): Promise<ScenarioResult>;
}

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const wanted = new Set(process.argv.slice(2));
const dir = join(import.meta.dirname, 'scenarios');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .sort();

const scenarios: Scenario[] = [];
for (const file of files) {
  const { scenario } = (await import(pathToFileURL(join(dir, file)).href)) as { scenario: Scenario };
  if (!wanted.size || wanted.has(scenario.name)) scenarios.push(scenario);
}

if (!process.env.BENCH_CHILD)
  console.log(`Postlane benchmarks: ${seconds}s per measurement, ${connections} connections, node ${process.version}\n`);
if (scenarios.length > 1) {
  for (const scenario of scenarios) {
    const child = spawnSync(process.execPath, [import.meta.filename, scenario.name], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_CHILD: '1' },
    });
    if (child.status !== 0) process.exitCode = child.status ?? 1;
  }
} else {
  for (const scenario of scenarios) {
    console.log(`## ${scenario.name}: ${scenario.description}`);
    const result = await scenario.run({ seconds, connections });
    for (const line of result.lines) console.log(line);
    console.log('');
  }
}
