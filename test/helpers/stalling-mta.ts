// An MTA that can hold back its reply to DATA and, like a real one, keeps a message only once
// it replied 250: a client killed mid-transaction leaves nothing behind (crash and chaos tests).
// It also tells when every 250 it sent has been read: a client that sends its next command on
// a connection (or closes it) has read the reply before it; see `repliesRead`.
import { SMTPServer } from 'smtp-server';

export type StallingMta = Awaited<ReturnType<typeof startStallingMta>>;

export async function startStallingMta(options: { stalling?: boolean } = {}) {
  let stalling = options.stalling ?? true;
  // Sessions answered 250 whose client has not shown since that it read the answer.
  const unread = new Set<string>();
  let onRead: (() => void) | null = null;
  const read = (sessionId: string) => {
    if (unread.delete(sessionId) && unread.size === 0) onRead?.();
  };
  const held: Array<() => void> = [];
  const accepted: Array<{ rcptTo: string[]; raw: Buffer }> = [];
  let received = 0;
  let open = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 200,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received++;
        const reply = () => {
          // The client is gone: the transaction failed, nothing was accepted.
          if ((session as { closed?: boolean }).closed) return;
          accepted.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks) });
          unread.add(session.id);
          callback(null, '2.0.0 Ok: queued');
        };
        if (stalling) held.push(reply);
        else reply();
      });
    },
    onMailFrom(_address, session, callback) {
      read(session.id);
      callback();
    },
    onConnect(_session, callback) {
      open++;
      callback();
    },
    onClose(session) {
      (session as { closed?: boolean }).closed = true;
      open--;
      read(session.id);
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as { port: number }).port,
    accepted,
    get received() {
      return received;
    },
    get openConnections() {
      return open;
    },
    /** Answers from now on; the held replies are sent, or with `dropHeld` never (their client
     *  was killed: its connections are dead even if their close has not been seen yet). */
    release({ dropHeld = false } = {}) {
      stalling = false;
      const replies = held.splice(0);
      if (!dropHeld) for (const reply of replies) reply();
    },
    /** From now on replies to DATA are held again (until `release`). */
    hold() {
      stalling = true;
    },
    /**
     * Resolves once the client has read every 250 sent so far: each connection answered 250
     * sent its next command or closed. True then; false after `timeoutMs` (connections left
     * idle after their last 250, which a live client has read long since).
     */
    repliesRead(timeoutMs: number): Promise<boolean> {
      if (unread.size === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          onRead = null;
          unread.clear();
          resolve(false);
        }, timeoutMs);
        onRead = () => {
          clearTimeout(timer);
          onRead = null;
          resolve(true);
        };
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
