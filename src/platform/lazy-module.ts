// A CommonJS package loaded at its first use rather than when the importing file loads: for
// heavy libraries only some processes or requests need (their heap counts in every process
// that merely imports the file).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Returns a getter that requires `specifier` on its first call and the same module after. */
export function lazyModule<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(specifier) as T);
}
