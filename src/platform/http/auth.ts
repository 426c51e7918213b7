// Bearer API keys: `Authorization: Bearer secret_…`. Secrets are 190 random bits, so a plain
// SHA-256 is a safe stored form (no slow hash needed) and lets us look a key up by its hash.
// Lookups are cached for a moment; deleting or regenerating a key drops it from this
// process's cache at once (other processes see the change within CACHE_MS).
// last_used_at is written at once on a key's first use, then in batches (not one write per
// request under load).
import { hash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import { isoFromMs, nowIso, nowMs } from '../clock.ts';
import { preparedQuery } from '../db/prepared.ts';

export const WORKSPACE_ROLES = ['admin', 'member'] as const;
/** A user's role in a workspace: an admin also manages its people and its API keys (roles.ts
 *  enforces it). */
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

/** `events`: an Events Only key, which sends product events and does nothing else
 *  (https://emailit.com/docs/developers/api-keys/#scopes). */
export type Scope = 'full' | 'sending' | 'events';

/**
 * Who a request acts as, whatever the credential: an API key, a dashboard session, and any
 * later kind (an OAuth access token). `scope` bounds what the credential may reach; the role
 * bounds what its user may do (roles.ts decides both ways the same for every credential).
 */
export interface Principal {
  /** The API key's id; empty for a credential that is no API key. */
  keyId: string;
  keyHash: string;
  workspaceId: string;
  scope: Scope;
  sendingDomainId: string | null;
  /** The user a credential acts for (a session; an OAuth token). Every credential that acts for
   *  a user sets it, with `role`: without a role such a principal counts as a member. Absent for
   *  an API key, which speaks for the workspace (roles.ts actingRole). */
  userId?: string;
  /** That user's role in `workspaceId`, read when the request is authenticated. */
  role?: WorkspaceRole;
}

/** Authenticates a request by its session cookie (the users resource installs one). */
export type CookieAuthenticator = (request: FastifyRequest) => Promise<Principal | null>;

/** Authenticates a bearer that is no API key: an OAuth access token (the oauth resource installs one). */
export type TokenAuthenticator = (token: string) => Promise<Principal | null>;

const CACHE_MS = 1000;
const FLUSH_MS = 2000;
// Bounds the cache against a flood of distinct valid-looking secrets.
const MAX_CACHED_KEYS = 10_000;

export function hashSecret(secret: string): string {
  // One-shot hashing: no Hash object per request.
  return hash('sha256', secret, 'hex');
}

const BEARER_SECRET_LENGTH = 'Bearer secret_'.length + 32;

export function bearerSecret(header: string | undefined): string | null {
  if (!header) return null;
  // The usual form, `Bearer secret_` and 32 characters, without a regular expression (it runs on
  // every request). Whatever else it lets through is no key's secret, so it fails as it would.
  if (header.length === BEARER_SECRET_LENGTH && header.startsWith('Bearer secret_')) return header.slice(7);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

interface CachedKey {
  principal: Principal;
  expires: number;
  stamped: boolean; // last_used_at already persisted once for this secret
}

const liveKeyByHash = preparedQuery((db, p: { hash: string }) =>
  db
    .selectFrom('api_keys')
    .select(['id', 'workspace_id', 'scope', 'sending_domain_id', 'last_used_at'])
    .where('key_hash', '=', p.hash)
    .where('deleted_at', 'is', null),
);

export class Authenticator {
  private readonly cache = new Map<string, CachedKey>();
  private readonly pendingUse = new Map<string, { hash: string; atMs: number }>();
  private timer: NodeJS.Timeout | null = null;
  private readonly db: Db;
  /** Consulted only for requests without an Authorization header (the API-key path is untouched). */
  cookieAuthenticator: CookieAuthenticator | null = null;
  /** Consulted for bearers that are not `secret_…` keys (the API-key path is untouched). */
  tokenAuthenticator: TokenAuthenticator | null = null;
  constructor(db: Db) {
    this.db = db;
  }

  /**
   * The principal of a secret seen within CACHE_MS, without waiting on anything (most requests:
   * their hook then needs no promise); undefined when it must be looked up.
   */
  cachedPrincipal(secret: string | null): Principal | undefined {
    if (!secret) return undefined;
    const cached = this.cache.get(secret);
    if (!cached || cached.expires < Date.now() || !cached.stamped) return undefined;
    this.queueUse(cached.principal);
    return cached.principal;
  }

  /** An HTTP bearer: an API key, or else an OAuth access token. */
  authenticateBearer(secret: string | null): Promise<Principal | null> {
    if (secret && !secret.startsWith('secret_') && this.tokenAuthenticator) return this.tokenAuthenticator(secret);
    return this.authenticate(secret);
  }

  async authenticate(secret: string | null): Promise<Principal | null> {
    if (!secret || !secret.startsWith('secret_') || secret.length > 200) return null;
    const now = Date.now();
    // Keyed by the secret itself: hashing it is needed only to look it up in the table.
    let cached = this.cache.get(secret);
    if (!cached || cached.expires < now) {
      const hash = hashSecret(secret);
      const [row] = await liveKeyByHash(this.db, { hash });
      if (!row) {
        this.cache.delete(secret);
        return null;
      }
      cached = {
        principal: {
          keyId: row.id,
          keyHash: hash,
          workspaceId: row.workspace_id,
          scope: row.scope as Scope,
          sendingDomainId: row.sending_domain_id,
        },
        expires: now + CACHE_MS,
        stamped: cached?.stamped || row.last_used_at !== null,
      };
      if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
      this.cache.set(secret, cached);
    }
    await this.recordUse(cached);
    return cached.principal;
  }

  private async recordUse(cached: CachedKey): Promise<void> {
    const { keyId, keyHash } = cached.principal;
    if (!cached.stamped) {
      cached.stamped = true;
      await this.writeUse(keyId, keyHash, nowIso());
      return;
    }
    this.queueUse(cached.principal);
  }

  /** Records a use for the next batch write (the time is formatted when written, not per request). */
  private queueUse({ keyId, keyHash }: Principal): void {
    const pending = this.pendingUse.get(keyId);
    if (pending && pending.hash === keyHash) pending.atMs = nowMs();
    else this.pendingUse.set(keyId, { hash: keyHash, atMs: nowMs() });
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  private async writeUse(keyId: string, keyHash: string, at: string): Promise<void> {
    // Matching the hash too: a use recorded before a regeneration must not stamp the new secret.
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).where('key_hash', '=', keyHash).execute();
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.pendingUse];
    this.pendingUse.clear();
    for (const [keyId, use] of batch) {
      try {
        await this.writeUse(keyId, use.hash, isoFromMs(use.atMs));
      } catch {
        // Losing a last_used_at stamp is harmless; the next use records it again.
      }
    }
  }

  /** Called when a key is deleted or regenerated: its old secret must fail at once. */
  forgetKey(keyId: string): void {
    for (const [secret, cached] of this.cache) if (cached.principal.keyId === keyId) this.cache.delete(secret);
    this.pendingUse.delete(keyId);
  }
}
