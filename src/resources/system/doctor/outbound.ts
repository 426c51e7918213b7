// Outbound port 25: many providers block it on new servers, and then nothing is ever
// delivered. The probe resolves a receiver's MX (DOCTOR_PROBE_DOMAIN, through DNS_SERVERS),
// connects on MX_PORT and waits for the 220 greeting, then says QUIT.
import type { Resolver } from 'node:dns/promises';
import { connect } from 'node:net';
import { fail, pass, skip, warn, PROBE_TIMEOUT_MS, type DoctorCheck } from './types.ts';

/** The greeting line of an SMTP server at address:port, or why there was none. */
export function readGreeting(
  address: string,
  port: number,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<{ greeting: string } | { error: string }> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    let buffer = '';
    const done = (result: { greeting: string } | { error: string }) => {
      clearTimeout(timer);
      socket.removeAllListeners('data');
      if ('greeting' in result) socket.end('QUIT\r\n');
      else socket.destroy();
      socket.on('error', () => {});
      resolve(result);
    };
    const timer = setTimeout(() => done({ error: `no answer within ${timeoutMs / 1000} s (the port is probably filtered)` }), timeoutMs);
    socket.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    socket.on('data', (data) => {
      buffer += data.toString('latin1');
      const line = /^(\d{3})[ -][^\r\n]*\r?\n/m.exec(buffer);
      if (line) done(line[1] === '220' ? { greeting: line[0].trim() } : { error: `greeted with "${line[0].trim()}"` });
    });
  });
}

export async function checkOutboundPort(resolver: Resolver, probeDomain: string, mxPort: number, smarthost: boolean): Promise<DoctorCheck> {
  const id = 'outbound_port_25';
  if (smarthost) return skip(id, 'Mail is relayed through SMARTHOST_URL; port 25 is not used');
  let exchanges: string[];
  try {
    exchanges = (await resolver.resolveMx(probeDomain)).sort((a, b) => a.priority - b.priority).map((mx) => mx.exchange);
  } catch (error) {
    return skip(
      id,
      `Could not look up the MX of ${probeDomain} (${(error as { code?: string }).code ?? error}); outbound port ${mxPort} was not tested`,
    );
  }
  for (const exchange of exchanges.slice(0, 2)) {
    let addresses: string[];
    try {
      addresses = await resolver.resolve4(exchange);
    } catch {
      continue;
    }
    if (addresses.length === 0) continue;
    const outcome = await readGreeting(addresses[0], mxPort);
    if ('greeting' in outcome) return pass(id, `Connected to ${exchange} (${addresses[0]}) on port ${mxPort}: ${outcome.greeting}`);
    return fail(
      id,
      `Could not reach ${exchange} (${addresses[0]}) on port ${mxPort}: ${outcome.error}`,
      `Ask your hosting provider to open outbound TCP port ${mxPort} (many block it on new servers), or relay through a provider with SMARTHOST_URL`,
    );
  }
  return warn(
    id,
    `${probeDomain} has no reachable MX host address; outbound port ${mxPort} was not tested`,
    'Set DOCTOR_PROBE_DOMAIN to a domain whose mail servers accept connections',
  );
}
