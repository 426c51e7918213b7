// What both listeners share: reading a DATA stream with a size cap, and starting and stopping
// an smtp-server on a port.
import type { SMTPServer, SMTPServerDataStream } from 'smtp-server';

export interface ReadMessage {
  raw: Buffer;
  /** More than the limit arrived; `raw` is then incomplete and must be refused. */
  oversized: boolean;
}

/** Reads a message, keeping at most `limit` bytes in memory (the rest is drained, not kept). */
export function readMessage(stream: SMTPServerDataStream, limit: number): Promise<ReadMessage> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let oversized = false;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) oversized = true;
      else chunks.push(chunk);
    });
    stream.on('end', () =>
      resolve({ raw: oversized ? Buffer.alloc(0) : Buffer.concat(chunks, bytes), oversized: oversized || stream.sizeExceeded }),
    );
    stream.on('error', reject);
  });
}

export interface Listening {
  port: number;
  server: SMTPServer;
  close(): Promise<void>;
}

export async function listen(server: SMTPServer, port: number, host: string): Promise<Listening> {
  let binding: ((error: Error) => void) | null = null;
  // smtp-server re-emits socket and server errors on itself; after the bind they are a
  // client's problem (resets, failed TLS handshakes), not the process's.
  server.on('error', (error: Error) => binding?.(error));
  await new Promise<void>((resolve, reject) => {
    binding = (error) => reject(new Error(`SMTP listener could not bind ${host}:${port}: ${error.message}`));
    server.listen(port, host, () => resolve());
  });
  binding = null;
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
