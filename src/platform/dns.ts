// Every DNS lookup the service makes goes through one resolver configured by DNS_SERVERS
// (comma list of `ip` or `ip:port`), so tests and operators control resolution fully.
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';

/** `1.2.3.4:5353` and `[::1]:5353` → the forms node's setServers accepts. */
export function normalizeDnsServer(server: string): string {
  const trimmed = server.trim();
  if (isIP(trimmed)) return trimmed;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(trimmed);
  if (bracketed) return bracketed[2] ? `[${bracketed[1]}]:${bracketed[2]}` : bracketed[1];
  const hostPort = /^([\d.]+):(\d+)$/.exec(trimmed);
  if (hostPort && isIP(hostPort[1])) return `${hostPort[1]}:${hostPort[2]}`;
  throw new Error(`DNS_SERVERS entry "${server}" is not an ip or ip:port`);
}

export interface ResolverOptions {
  timeoutMs?: number;
  tries?: number;
}

export function createResolver(dnsServers: string[], options: ResolverOptions = {}): Resolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 5000, tries: options.tries ?? 2 });
  if (dnsServers.length > 0) resolver.setServers(dnsServers.map(normalizeDnsServer));
  return resolver;
}

/** DNS "no such record" outcomes, as opposed to failures (timeouts, refused servers). */
export function isNoRecords(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return code === 'ENODATA' || code === 'ENOTFOUND' || code === 'NXDOMAIN';
}
