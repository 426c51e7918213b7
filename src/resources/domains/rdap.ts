// The registration date of a domain from RDAP (RFC 9083): GET `${RDAP_URL}/domain/<name>`,
// the `registration` event. RDAP_URL is typically a bootstrap redirector (rdap.org) that
// answers with a redirect to the registry's own server, so a few redirects are followed.
// The RDAP host is resolved through DNS_SERVERS like every other lookup.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Resolver } from 'node:dns/promises';

export type RdapResult =
  | { kind: 'registered'; registeredAt: string }
  | { kind: 'unknown'; reason: string } // the registry does not know the domain or gives no date
  | { kind: 'failed'; reason: string }; // network or server trouble: try again later

export interface RdapOptions {
  resolver?: Resolver | null;
  timeoutMs?: number;
  maxRedirects?: number;
}

const MAX_BODY = 1024 * 1024;

export async function lookupRegistration(rdapUrl: string, domain: string, options: RdapOptions = {}): Promise<RdapResult> {
  let url = `${rdapUrl.replace(/\/+$/, '')}/domain/${encodeURIComponent(domain)}`;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  try {
    for (let redirects = 0; ; redirects++) {
      const response = await get(url, Math.max(1, deadline - Date.now()), options.resolver ?? null);
      if ([301, 302, 303, 307, 308].includes(response.status) && response.location) {
        if (redirects >= (options.maxRedirects ?? 3)) return { kind: 'failed', reason: 'RDAP redirected too many times' };
        url = new URL(response.location, url).href;
        continue;
      }
      if (response.status === 404) return { kind: 'unknown', reason: 'the registry has no RDAP record of the domain' };
      if (response.status < 200 || response.status >= 300) return { kind: 'failed', reason: `RDAP answered HTTP ${response.status}` };
      return registrationFrom(JSON.parse(response.body));
    }
  } catch (error) {
    return { kind: 'failed', reason: `RDAP lookup failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The `registration` event of an RDAP domain object. */
export function registrationFrom(body: unknown): RdapResult {
  const events = (body as { events?: unknown })?.events;
  if (Array.isArray(events)) {
    for (const event of events) {
      const { eventAction, eventDate } = (event ?? {}) as { eventAction?: unknown; eventDate?: unknown };
      if (eventAction === 'registration' && typeof eventDate === 'string' && !Number.isNaN(Date.parse(eventDate))) {
        return { kind: 'registered', registeredAt: new Date(Date.parse(eventDate)).toISOString() };
      }
    }
  }
  return { kind: 'unknown', reason: 'the RDAP record has no registration date' };
}

function resolverLookup(resolver: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    (async () => {
      const v4 = await resolver.resolve4(hostname).catch(() => [] as string[]);
      const v6 = v4.length > 0 ? [] : await resolver.resolve6(hostname).catch(() => [] as string[]);
      const all = [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
      if (all.length === 0) throw Object.assign(new Error(`cannot resolve ${hostname}`), { code: 'ENOTFOUND' });
      return all;
    })().then(
      (all) => (options.all ? callback(null, all) : callback(null, all[0].address, all[0].family)),
      (error) => callback(error, '', 0),
    );
  };
}

function get(url: string, timeoutMs: number, resolver: Resolver | null): Promise<{ status: number; location?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : null;
    if (!client) return reject(new Error(`unsupported URL scheme ${target.protocol}`));
    const request = client.get(
      target,
      {
        headers: { accept: 'application/rdap+json, application/json' },
        ...(resolver ? { lookup: resolverLookup(resolver) } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY) request.destroy(new Error('RDAP response too large'));
          else chunks.push(chunk);
        });
        response.on('end', () => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, location: response.headers.location, body: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', reject);
      },
    );
    const timer = setTimeout(() => request.destroy(new Error('RDAP request timed out')), timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
