// Hands an already signed message to a nodemailer pool as it is. Mailer.sendMail would wrap the
// raw bytes in a MimeNode (a random boundary and Message-ID, a PassThrough, a pipeline and a
// newline transform) only to stream them back out unchanged: about a third of the delivery
// client's CPU per message. A transport's documented interface is `send(mail, callback)` with
// `mail.message` offering the envelope and `createReadStream()`, whose result the connection
// pipes into its data stream; the pool gets exactly that (see pipeableOf).
import type { Writable } from 'node:stream';
import type nodemailer from 'nodemailer';

type Transport = ReturnType<typeof nodemailer.createTransport>;

export interface RawEnvelope {
  /** MAIL FROM; '' for the null sender. */
  from: string;
  to: string[];
}

interface PoolTransporter {
  send(mail: unknown, callback: (error: Error | null, info?: { response?: string }) => void): unknown;
}

/**
 * The message as nodemailer's connection takes it: it calls `message.pipe(dataStream)` once the
 * server has answered DATA, and this writes the bytes in one piece. Not a Readable: a stream's
 * flowing machinery (resume, read, push, end-of-stream ticks) cost more main-thread CPU per
 * message than the SMTP exchange around it. `readableDidRead` stays false until then, so a
 * pooled connection found dead before the first byte requeues the message.
 */
function pipeableOf(raw: Buffer): { readableDidRead: boolean; pipe(destination: Writable): Writable } {
  return {
    readableDidRead: false,
    pipe(destination) {
      this.readableDidRead = true;
      // The data stream pushes the dot-stuffed message, then (at its end) the terminating
      // ".\r\n", each straight into the socket: two write system calls per message, at about
      // 20 µs each on a VM where the delivery engine's main thread is its bottleneck. With the
      // socket corked around the end() they leave as one writev.
      const socket = socketOf(destination);
      socket?.cork();
      try {
        destination.end(raw);
      } finally {
        socket?.uncork();
      }
      return destination;
    },
  };
}

// The socket nodemailer pipes its data stream into (`dataStream.pipe(socket)` before it pipes
// the message in). Node keeps a Readable's pipe destinations in `_readableState.pipes`; where a
// Node version does not, nothing is corked and the two writes stay two.
function socketOf(dataStream: Writable): Writable | undefined {
  const pipes = (dataStream as unknown as { _readableState?: { pipes?: unknown } })._readableState?.pipes;
  const socket = Array.isArray(pipes) && pipes.length === 1 ? pipes[0] : undefined;
  return typeof socket?.cork === 'function' && typeof socket.uncork === 'function' ? (socket as Writable) : undefined;
}

// An address nodemailer's envelope parsing leaves exactly as it is: a dot-atom local part at a
// lower-case ASCII domain. Anything else (quoting, IDN, stray characters) goes through sendMail,
// which normalizes it.
const PLAIN_ADDRESS = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[a-z0-9-]+(\.[a-z0-9-]+)*$/;

/** Sends `raw` to `envelope` over `transport`'s pool; resolves with the server's final reply. */
export function sendRaw(transport: Transport, envelope: RawEnvelope, raw: Buffer): Promise<{ response?: string }> {
  const plain = (envelope.from === '' || PLAIN_ADDRESS.test(envelope.from)) && envelope.to.every((to) => PLAIN_ADDRESS.test(to));
  if (!plain) return transport.sendMail({ envelope: { from: envelope.from, to: envelope.to }, raw });
  const transporter = (transport as unknown as { transporter: PoolTransporter }).transporter;
  const mail = {
    data: {},
    message: {
      // A fresh object per call: the pool adds fields (dsn) to the envelope it is given.
      getEnvelope: () => ({ from: envelope.from, to: [...envelope.to] }),
      messageId: () => '',
      getHeader: () => '',
      createReadStream: () => pipeableOf(raw),
    },
  };
  return new Promise((resolve, reject) => {
    transporter.send(mail, (error, info) => (error ? reject(error) : resolve(info ?? {})));
  });
}
