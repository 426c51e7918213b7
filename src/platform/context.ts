// What a running Postlane hands to every resource: configuration, the database, the logger
// and the shared authenticator.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db, Dialect } from './db/database.ts';
import type { Authenticator } from './http/auth.ts';
import type { Sealer } from './secrets.ts';

export interface AppContext {
  config: Config;
  db: Db;
  dialect: Dialect;
  log: Logger;
  auth: Authenticator;
  /** Seals secrets stored at rest (DKIM private keys, webhook secrets). */
  secrets: Sealer;
  /** Key of the HMAC in VERP return-path addresses (derived from the encryption key). */
  verpSecret: Buffer;
}
