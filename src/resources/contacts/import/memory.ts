// A long import allocates short-lived rows fast, and V8 lets its old generation grow to
// hundreds of megabytes of garbage before a full collection when nothing else asks for one
// (measured: 300,000 rows left 35 MB live in a 300 MB heap). A full collection every few
// batches keeps the heap near what is live (a few tens of milliseconds each), so an import's
// memory stays flat whatever the file's size. `gc` is exposed at run time: the flag is set,
// then a fresh context hands out the function.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

export function collectGarbage(): void {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    } catch {
      gc = null;
    }
  }
  gc?.();
}
