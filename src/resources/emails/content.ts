// The stored form of a message: everything needed to compose it again for any recipient,
// for delivery, reads (body, attachments), forward and retry.
import type { StoredAttachment } from './attachments.ts';
import type { ParsedAddress } from './addresses.ts';

export interface StoredMessage {
  from: ParsedAddress;
  to: ParsedAddress[];
  cc: ParsedAddress[];
  bcc: ParsedAddress[];
  reply_to: ParsedAddress[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: StoredAttachment[];
}

/** Bytes of `n` bytes once base64-encoded in 76-character lines (as attachments travel). */
export function base64MimeSize(n: number): number {
  const encoded = Math.ceil(n / 3) * 4;
  return encoded + Math.ceil(encoded / 76) * 2;
}

/** The size of the whole message as the 40 MB rule counts it: bodies, headers and
 *  attachments as they travel (base64-encoded). */
export function messageSize(message: Omit<StoredMessage, 'attachments'> & { attachments: Array<{ size: number }> }): number {
  let size = Buffer.byteLength(message.subject) + Buffer.byteLength(message.html ?? '') + Buffer.byteLength(message.text ?? '');
  for (const [name, value] of Object.entries(message.headers)) size += Buffer.byteLength(name) + Buffer.byteLength(value) + 4;
  for (const attachment of message.attachments) size += base64MimeSize(attachment.size);
  return size;
}

export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;
