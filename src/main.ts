// Process entry: `node src/main.ts <command>` (npm start runs `serve`).
//
// A server first replaces itself (process.execve: same pid, stdio, arguments and environment)
// with a process started with memory settings for a long-running service; each flag and
// variable below is set unless the operator set it themselves. Measured on the campaign bench
// (docs/performance.md):
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
// - MALLOC_MMAP_THRESHOLD_=16384: blocks of 16 KB and more (V8's compiler zones, the largest
//   transient users of malloc) get mappings of their own, returned to the system when freed,
//   instead of growing glibc's main heap, which a few long-lived blocks above them keep from
//   shrinking. That heap's peak went from 33-37 MB to 29 MB and the campaign bench's peak from
//   184-198 MB to 181-182 MB (30,000 recipients), with no measurable CPU cost.
// - MALLOC_TRIM_THRESHOLD_=8388608: a fixed mmap threshold also fixes the trim threshold at
//   128 KB, and the heap's top was returned and taken back again and again (the 1,000,000-
//   contact snapshot: 5.1-5.6 s -> 6.0-6.1 s); up to 8 MB free at the top stay (5.3-5.7 s).
// - NODE_COMPILE_CACHE (Node's own default directory, unless the operator chose one): the
//   type-stripped sources come from the cache, so a server started before with the same
//   files never loads Node's TypeScript stripper, a WebAssembly module that kept about
//   10 MB resident for the process's life.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SERVE_V8_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=25', '--memory-saver-mode'];
const SERVE_MALLOC_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '16384', MALLOC_TRIM_THRESHOLD_: '8388608' };
// A flag the operator set (either way: --no-memory-saver-mode chooses campaign speed over memory) wins over ours.
const ownFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].map(
  (flag) =>
    flag
      .replace(/^--no-/, '--')
      .replace(/_/g, '-')
      .split('=')[0],
);
const missingFlags = SERVE_V8_FLAGS.filter((flag) => !ownFlags.includes(flag.split('=')[0]));
const missingMalloc = Object.keys(SERVE_MALLOC_ENV).some((name) => process.env[name] === undefined);
if (process.argv[2] === 'serve' && typeof process.execve === 'function' && (missingFlags.length > 0 || missingMalloc)) {
  const compileCache = process.env.NODE_DISABLE_COMPILE_CACHE ? {} : { NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache') };
  process.execve(process.execPath, [process.execPath, ...missingFlags, ...process.execArgv, ...process.argv.slice(1)], {
    ...SERVE_MALLOC_ENV,
    ...compileCache,
    ...process.env,
  });
}

const { runCli } = await import('./cli/index.ts');
process.exitCode = await runCli(process.argv.slice(2));
