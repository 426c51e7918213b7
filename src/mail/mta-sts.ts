// MTA-STS (RFC 8461) for outbound delivery: the recipient domain's policy says which MX hosts
// are legitimate and, in `enforce` mode, that mail may only go over TLS with a certificate that
// is valid for the MX host. The TXT record `_mta-sts.<domain>` is read through our resolver
// (DNS_SERVERS); the policy file comes over HTTPS from `mta-sts.<domain>` (its address also
// resolved through our resolver, its certificate verified). Policies are cached for their
// max_age and refetched when the TXT id changes; a policy that cannot be fetched while a cached
// one is still valid keeps the cached one (RFC 8461 §5.1).
import https from 'node:https';
import type { Resolver } from 'node:dns/promises';
import { loadMtaSts, type MtaStsModule } from './mta-sts-module.ts';

// mailauth's MTA-STS module loads with the first delivery that looks up a policy, not with
// every process that imports this file.
let stsModule: MtaStsModule | undefined;
const sts = () => (stsModule ??= loadMtaSts());

const NO_POLICY_TTL_MS = 60_000;

export interface StsPolicy {
  id: string;
  mode: 'enforce' | 'testing' | 'none';
  mx: string[];
  maxAge: number;
  /** When the cached policy expires (ms). */
  expiresAt: number;
}

export interface MtaStsOptions {
  resolver: Resolver;
  /** HTTPS port of the policy host (443; tests use another). */
  port?: number;
  /** Extra trusted CA certificates (tests); the system's are used otherwise. */
  ca?: string | Buffer | Array<string | Buffer>;
  timeoutMs?: number;
}

/** Policy lookups with a cache; `policyFor` never throws (no policy → null). */
export class MtaSts {
  private readonly options: MtaStsOptions;
  private readonly cache = new Map<string, StsPolicy>();
  /** Domains without a policy, asked again after NO_POLICY_TTL_MS (not once per message). */
  private readonly none = new Map<string, number>();

  constructor(options: MtaStsOptions) {
    this.options = options;
  }

  private dnsResolve = async (name: string, type: string) => this.options.resolver.resolve(name, type as 'TXT') as Promise<never>;

  /** The domain's policy in force (enforce or testing), or null when it publishes none. */
  async policyFor(domain: string): Promise<StsPolicy | null> {
    const now = Date.now();
    const cached = this.cache.get(domain);
    if (!cached && (this.none.get(domain) ?? 0) > now) return null;
    let id: string | false;
    try {
      id = await sts().resolvePolicy(domain, { resolver: this.dnsResolve as never });
    } catch {
      // DNS trouble: a still valid cached policy stays in force.
      return cached && cached.expiresAt > now ? cached : null;
    }
    if (!id) {
      if (this.none.size > 10_000) this.none.clear();
      if (!cached) this.none.set(domain, now + NO_POLICY_TTL_MS);
      return cached && cached.expiresAt > now ? cached : null;
    }
    if (cached && cached.id === id && cached.expiresAt > now) return cached;
    try {
      const text = await this.fetchPolicyText(domain);
      const parsed = sts().parsePolicy(text) as unknown as { mode: StsPolicy['mode']; mx?: string[]; maxAge?: number; max_age?: number };
      const maxAge = Number(parsed.maxAge ?? parsed.max_age ?? 86400);
      const policy: StsPolicy = { id, mode: parsed.mode, mx: parsed.mx ?? [], maxAge, expiresAt: now + maxAge * 1000 };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(domain, policy);
      return policy.mode === 'none' ? null : policy;
    } catch {
      return cached && cached.expiresAt > now ? cached : null;
    }
  }

  /** True when `mxHost` is one the policy names (`*.example.com` covers one label). */
  static allows(policy: StsPolicy, mxHost: string): boolean {
    return sts().validateMx(mxHost, { mode: policy.mode, mx: policy.mx, id: policy.id } as never).valid;
  }

  private fetchPolicyText(domain: string): Promise<string> {
    const host = `mta-sts.${domain}`;
    const { resolver } = this.options;
    return new Promise((resolve, reject) => {
      const request = https.get(
        {
          host,
          servername: host,
          port: this.options.port ?? 443,
          path: '/.well-known/mta-sts.txt',
          ca: this.options.ca,
          rejectUnauthorized: true,
          timeout: this.options.timeoutMs ?? 15_000,
          // The policy host is found through DNS_SERVERS like every other name we look up.
          lookup: (hostname, lookupOptions, callback) => {
            const done = callback as (
              err: Error | null,
              address?: string | Array<{ address: string; family: number }>,
              family?: number,
            ) => void;
            resolver.resolve4(hostname).then(
              (addresses) =>
                (lookupOptions as { all?: boolean }).all
                  ? done(
                      null,
                      addresses.map((address) => ({ address, family: 4 })),
                    )
                  : done(null, addresses[0], 4),
              (error) => done(error),
            );
          },
        },
        (response) => {
          if (response.statusCode !== 200) {
            response.resume();
            return reject(new Error(`MTA-STS policy answered HTTP ${response.statusCode}`));
          }
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            body += chunk;
            if (body.length > 65_536) request.destroy(new Error('MTA-STS policy too large'));
          });
          response.on('end', () => resolve(body));
        },
      );
      request.on('timeout', () => request.destroy(new Error('MTA-STS policy request timed out')));
      request.on('error', reject);
    });
  }
}
