// A fake RDAP service on loopback (RFC 9083 domain objects) for the Pay-as-you-go review rule:
// point RDAP_URL at `url`. `register` sets a domain's registration date; unknown domains
// answer 404; `fail` makes a domain answer an HTTP error; `redirect` makes the service answer
// like rdap.org, with a redirect to the "registry" path on the same server.
import { createServer, type Server } from 'node:http';

export interface TestRdapServer {
  url: string;
  register(domain: string, registeredAt: Date | string): void;
  /** A domain object without a `registration` event. */
  registerWithoutDate(domain: string): void;
  fail(domain: string, status: number): void;
  redirect(domain: string): void;
  clear(domain: string): void;
  requests: string[];
  close(): Promise<void>;
}

export async function startRdapServer(): Promise<TestRdapServer> {
  const registered = new Map<string, string | null>();
  const failing = new Map<string, number>();
  const redirecting = new Set<string>();
  const requests: string[] = [];

  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    requests.push(path);
    const match = /^\/(registry\/)?domain\/([^/?]+)$/.exec(path);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/rdap+json', ...headers });
      response.end(body === undefined ? '' : JSON.stringify(body));
    };
    if (!match) return send(400, { errorCode: 400, title: 'bad request' });
    const domain = decodeURIComponent(match[2]).toLowerCase();
    if (failing.has(domain)) return send(failing.get(domain)!, { errorCode: failing.get(domain), title: 'failure' });
    if (!match[1] && redirecting.has(domain)) return send(302, undefined, { location: `/registry/domain/${domain}` });
    if (!registered.has(domain)) return send(404, { errorCode: 404, title: 'not found' });
    const date = registered.get(domain);
    send(200, {
      objectClassName: 'domain',
      ldhName: domain.toUpperCase(),
      status: ['active'],
      events: [
        ...(date ? [{ eventAction: 'registration', eventDate: date }] : []),
        { eventAction: 'last changed', eventDate: new Date().toISOString() },
      ],
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    register: (domain, at) => void registered.set(domain.toLowerCase(), typeof at === 'string' ? at : at.toISOString()),
    registerWithoutDate: (domain) => void registered.set(domain.toLowerCase(), null),
    fail: (domain, status) => void failing.set(domain.toLowerCase(), status),
    redirect: (domain) => void redirecting.add(domain.toLowerCase()),
    clear: (domain) => {
      registered.delete(domain.toLowerCase());
      failing.delete(domain.toLowerCase());
      redirecting.delete(domain.toLowerCase());
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
