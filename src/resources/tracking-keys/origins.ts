// The sites a tracking key accepts events from (`allowed_origins`,
// https://emailit.com/docs/api-reference/tracking-keys/): an origin (`https://shop.example.com`:
// that scheme, host and port only), a host (`shop.example.com`: any scheme and port) or a
// wildcard (`*.example.com`: the domain and all its subdomains). None: every site.
export const MAX_ALLOWED_ORIGINS = 50;

const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** An entry in stored form (lowercase; an origin without a default port), or null when it is none of the three forms. */
export function normalizeAllowedOrigin(entry: string): string | null {
  const value = entry.trim().toLowerCase();
  if (value.startsWith('*.')) return HOST.test(value.slice(2)) && value.slice(2).includes('.') ? value : null;
  if (value.includes('://')) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return null;
    }
    if (
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.username ||
      url.password ||
      (url.pathname !== '/' && url.pathname !== '') ||
      url.search ||
      url.hash
    )
      return null;
    if (value.replace(/\/$/, '') !== url.origin) return null;
    return url.origin;
  }
  return HOST.test(value) ? value : null;
}

/** Whether the request's Origin header is allowed by the key's entries. */
export function originAllowed(allowed: string[], origin: string | undefined): boolean {
  if (allowed.length === 0) return true;
  if (!origin) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  const host = url.hostname.toLowerCase();
  return allowed.some((entry) => {
    if (entry.startsWith('*.')) return host === entry.slice(2) || host.endsWith(entry.slice(1));
    if (entry.includes('://')) return url.origin === entry;
    return host === entry;
  });
}
