// Loopback mail servers that answer mailbox checks the way real ones do, for the email
// verification tests and the verify-list benchmark. One server serves many domains, told
// apart by the RCPT address: a mailbox that exists (250), one that does not (550 5.1.1), a
// full one (452 4.2.2, or 552 5.2.2), a disabled one (550 5.2.1), catch-all domains (any
// address 250), greylisting domains (451 4.7.1 to a first attempt), domains whose server
// stops answering after RCPT, and unknown domains (554 5.7.1 relay access denied). It counts
// connections (and the most open at once), records every RCPT, and never takes a message.
// A silent server accepts connections and never greets (a server that times out).
import { createServer, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { freePort } from '../../src/dev/ports.ts';

export type MailboxState = 'exists' | 'full' | 'full-permanent' | 'disabled';

export interface MailDomain {
  /** Mailboxes by local part; any other local part does not exist (unless catch-all). */
  mailboxes?: Record<string, MailboxState>;
  catchAll?: boolean;
  /** 451 4.7.1 to the first attempt of each (client, sender, recipient) for `greylistMs`. */
  greylist?: boolean;
  /** Never answer RCPT TO (the client's timeout must end the check). */
  stallAtRcpt?: boolean;
  /** After this many RCPTs in one session, answer 421 and close (a server that limits sessions). */
  closeAfterRcpts?: number;
}

export interface MailboxServer {
  host: string;
  port: number;
  domains: Map<string, MailDomain>;
  setDomain(name: string, domain: MailDomain): void;
  connections: number;
  openConnections: number;
  maxOpenConnections: number;
  /** Every RCPT TO address asked, in order. */
  rcpts: string[];
  /** EHLO/HELO names and MAIL FROM addresses seen. */
  helloNames: string[];
  mailFroms: string[];
  /** DATA commands received (a mailbox check must never send one). */
  dataCommands: number;
  /** Time taken to answer each RCPT (lets concurrency build up); may be changed at any time. */
  rcptDelayMs: number;
  reset(): void;
  close(): Promise<void>;
}

export interface MailboxServerOptions {
  host?: string;
  port?: number;
  domains?: Record<string, MailDomain>;
  /** Time taken to answer each RCPT (lets concurrency build up). */
  rcptDelayMs?: number;
  greylistMs?: number;
}

const reply = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

export async function startMailboxServer(options: MailboxServerOptions = {}): Promise<MailboxServer> {
  const greylistMs = options.greylistMs ?? 60_000;
  const firstSeen = new Map<string, number>();
  const rcptsBySession = new Map<string, number>();
  const state: MailboxServer = {
    host: options.host ?? '127.0.0.1',
    port: 0,
    domains: new Map(Object.entries(options.domains ?? {})),
    setDomain: (name, domain) => void state.domains.set(name.toLowerCase(), domain),
    connections: 0,
    openConnections: 0,
    maxOpenConnections: 0,
    rcpts: [],
    helloNames: [],
    mailFroms: [],
    dataCommands: 0,
    rcptDelayMs: options.rcptDelayMs ?? 0,
    reset() {
      state.connections = 0;
      state.maxOpenConnections = state.openConnections;
      state.rcpts.length = 0;
      state.helloNames.length = 0;
      state.mailFroms.length = 0;
      state.dataCommands = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  function answer(address: string, client: string, sender: string): Error | null {
    const [local, domainName] = address.toLowerCase().split('@');
    const domain = state.domains.get(domainName);
    if (!domain) return reply(554, '5.7.1 <' + address + '>: Relay access denied');
    if (domain.greylist) {
      const key = `${client}|${sender}|${address.toLowerCase()}`;
      const seen = firstSeen.get(key);
      if (seen === undefined) firstSeen.set(key, Date.now());
      if (seen === undefined || Date.now() - seen < greylistMs)
        return reply(451, '4.7.1 <' + address + '>: Recipient address rejected: Greylisted, please try again later');
    }
    const mailbox = domain.mailboxes?.[local];
    if (mailbox === 'full') return reply(452, '4.2.2 <' + address + '>: Mailbox full, over quota');
    if (mailbox === 'full-permanent') return reply(552, '5.2.2 <' + address + '>: Mailbox full');
    if (mailbox === 'disabled') return reply(550, '5.2.1 <' + address + '>: Mailbox disabled, not accepting messages');
    if (mailbox === 'exists' || domain.catchAll) return null;
    return reply(550, '5.1.1 <' + address + '>: Recipient address rejected: User unknown in virtual mailbox table');
  }

  const server = new SMTPServer({
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    disableReverseLookup: true,
    logger: false,
    banner: 'mx.loopback.test ESMTP',
    closeTimeout: 100,
    onMailFrom(address, session, callback) {
      state.helloNames.push(session.hostNameAppearsAs);
      state.mailFroms.push(address.address);
      callback();
    },
    onRcptTo(address, session, callback) {
      state.rcpts.push(address.address.toLowerCase());
      const domain = state.domains.get(address.address.toLowerCase().split('@')[1] ?? '');
      if (domain?.stallAtRcpt) return; // never answers
      const asked = (rcptsBySession.get(session.id) ?? 0) + 1;
      rcptsBySession.set(session.id, asked);
      if (domain?.closeAfterRcpts !== undefined && asked > domain.closeAfterRcpts)
        return callback(reply(421, '4.7.0 Too many recipients in this session, closing'));
      const error = answer(address.address, session.remoteAddress, session.envelope.mailFrom ? session.envelope.mailFrom.address : '');
      const done = () => callback(error ?? undefined);
      if (state.rcptDelayMs > 0) setTimeout(done, state.rcptDelayMs);
      else done();
    },
    onData(stream, _session, callback) {
      state.dataCommands++;
      stream.resume();
      stream.on('end', () => callback(reply(554, '5.7.0 This server takes no mail')));
    },
  });
  server.on('error', () => {}); // clients that hang up are not failures
  // Connections counted from the TCP accept (the greeting delay included) until the server has
  // said goodbye (its side ended after 221) or the client hung up, whichever comes first.
  server.server.on('connection', (socket: Socket) => {
    state.connections++;
    state.openConnections++;
    state.maxOpenConnections = Math.max(state.maxOpenConnections, state.openConnections);
    let open = true;
    const over = () => {
      if (open) state.openConnections--;
      open = false;
    };
    socket.once('finish', over);
    socket.once('close', over);
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 0, state.host, () => resolve());
  });
  state.port = (server.server.address() as { port: number }).port;
  return state;
}

export interface SilentServer {
  host: string;
  port: number;
  connections: number;
  close(): Promise<void>;
}

/** Accepts TCP connections and never says a word. */
export async function startSilentServer(options: { host?: string; port?: number } = {}): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  const state: SilentServer = {
    host: options.host ?? '127.0.0.1',
    port: 0,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, state.host, () => resolve());
  });
  state.port = (server.address() as { port: number }).port;
  return state;
}

/**
 * `count` mail servers on one port at 127.0.0.<firstOctet>, 127.0.0.<firstOctet + 1>, … (an
 * MX_PORT shared by all, as on the internet), each serving the domains `domainsOf(i)` gives.
 */
export async function startMailboxFarm(
  count: number,
  domainsOf: (i: number) => Record<string, MailDomain>,
  options: { firstOctet?: number; rcptDelayMs?: number } = {},
): Promise<{ port: number; servers: MailboxServer[]; close(): Promise<void> }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const servers: MailboxServer[] = [];
    try {
      for (let i = 0; i < count; i++) {
        servers.push(
          await startMailboxServer({
            host: `127.0.0.${(options.firstOctet ?? 10) + i}`,
            port,
            domains: domainsOf(i),
            rcptDelayMs: options.rcptDelayMs,
          }),
        );
      }
      return { port, servers, close: async () => void (await Promise.all(servers.map((server) => server.close()))) };
    } catch (error) {
      await Promise.all(servers.map((server) => server.close()));
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt >= 10) throw error;
    }
  }
}
