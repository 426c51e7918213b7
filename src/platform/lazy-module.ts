// A CommonJS package loaded at its first use rather than when the importing file loads: for
// heavy libraries only some processes or requests need (their heap counts in every process
// that merely imports the file).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Returns a getter that requires `specifier` on its first call (then runs `prepare` on it
 *  once, for process-wide settings of the library) and the same module after. */
export function lazyModule<T>(specifier: string, prepare?: (loaded: T) => void): () => T {
  let loaded: T | undefined;
  return () => {
    if (loaded === undefined) {
      loaded = require(specifier) as T;
      prepare?.(loaded);
    }
    return loaded;
  };
}
