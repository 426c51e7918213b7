// The versions responses name, without loading the compiler: the main thread needs only these
// (mjml itself, about 16 MB of heap, loads in the pool's workers and for /mjml/reference).
import { createRequire } from 'node:module';

export const MJML_VERSION: string = (createRequire(import.meta.url)('mjml/package.json') as { version: string }).version;

export const DOCUMENT_SCHEMA_VERSION = 1;
