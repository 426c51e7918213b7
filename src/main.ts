// Process entry: `node src/main.ts <command>` (npm start runs `serve`).
//
// A server first replaces itself (process.execve: same pid, stdio, arguments and environment)
// with a process started with memory settings for a long-running service; each V8 flag below
// is added unless the operator set that flag themselves. Measured on the campaign bench (issue 12):
// - --max-semi-space-size=4: V8 sized the young generation from the machine's memory and
//   grew it to 128 MB per thread under a steady load, mostly garbage awaiting a scavenge;
//   capped at 8 MB, collection time did not measurably change.
// - --heap-growing-percent=25: the old generation grew to about 150 MB of mostly garbage
//   before a full collection (live data: about 45 MB); now it stays near 50 MB.
// - --memory-saver-mode: V8's mode for memory-constrained embedders (its collector compacts
//   fragmented pages and returns them, in every thread's heap). The campaign bench's peak went
//   from 208-211 MB to 191-199 MB; `npm run bench deliver` end to end 510/586 -> 539/565 msg/s
//   and server CPU 3.0/2.7 -> 2.9/2.8 ms/msg, alternating runs; but a campaign's recipients
//   cost about 20 % more CPU each (3.18/3.27 -> 3.78/4.06 ms).
// - MALLOC_ARENA_MAX=2: glibc gave each thread (build workers, checkpointer, libuv pool) its
//   own malloc arenas; freed blocks stayed resident in each (about 17 MB).
// - NODE_COMPILE_CACHE (Node's own default directory, unless the operator chose one): the
//   type-stripped sources come from the cache, so a server started before with the same
//   files never loads Node's TypeScript stripper, a WebAssembly module that kept about
//   10 MB resident for the process's life.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SERVE_V8_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=25', '--memory-saver-mode'];
// A flag the operator set (either way: --no-memory-saver-mode chooses campaign speed over memory) wins over ours.
const ownFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].map((flag) => flag.replace(/^--no-/, '--').replace(/_/g, '-').split('=')[0]);
const missingFlags = SERVE_V8_FLAGS.filter((flag) => !ownFlags.includes(flag.split('=')[0]));
if (process.argv[2] === 'serve' && typeof process.execve === 'function' && (missingFlags.length > 0 || !process.env.MALLOC_ARENA_MAX)) {
  const compileCache = process.env.NODE_DISABLE_COMPILE_CACHE ? {} : { NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache') };
  process.execve(process.execPath, [process.execPath, ...missingFlags, ...process.execArgv, ...process.argv.slice(1)], { MALLOC_ARENA_MAX: '2', ...compileCache, ...process.env });
}

const { runCli } = await import('./cli/index.ts');
process.exitCode = await runCli(process.argv.slice(2));
