// An MTA that can hold back its reply to DATA and, like a real one, keeps a message only once
// it replied 250: a client killed mid-transaction leaves nothing behind (crash and chaos tests).
import { SMTPServer } from 'smtp-server';

export type StallingMta = Awaited<ReturnType<typeof startStallingMta>>;

export async function startStallingMta() {
  let stalling = true;
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
          callback(null, '2.0.0 Ok: queued');
        };
        if (stalling) held.push(reply);
        else reply();
      });
    },
    onConnect(_session, callback) {
      open++;
      callback();
    },
    onClose(session) {
      (session as { closed?: boolean }).closed = true;
      open--;
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
    release() {
      stalling = false;
      for (const reply of held.splice(0)) reply();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

