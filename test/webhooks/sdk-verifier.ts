// What the official Emailit Node SDK checks when it verifies a delivery (its WebhookSignature
// `verify`), reimplemented independently from its documented behaviour:
//   1. with a tolerance (300 s by default), refuse when now - X-Emailit-Timestamp > tolerance;
//   2. compute lowercase hex HMAC-SHA256, keyed with the whole `whsec_…` secret, over
//      "{timestamp}.{raw body}", and compare it with X-Emailit-Signature in constant time
//      (different lengths fail);
//   3. the raw body must parse as JSON into an object (arrays included).
// A delivery this accepts is one the SDK accepts.
import { createHmac, timingSafeEqual } from 'node:crypto';

export class SignatureRejected extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

export function expectedSignature(rawBody: string, timestamp: string, secret: string): string {
  const mac = createHmac('sha256', secret);
  mac.update(timestamp + '.' + rawBody);
  return mac.digest('hex');
}

export function verifyLikeSdk(
  rawBody: string,
  signature: string | undefined,
  timestamp: string | undefined,
  secret: string,
  toleranceSeconds: number | null = 300,
  atMs = Date.now(),
): unknown {
  if (signature === undefined || timestamp === undefined) throw new SignatureRejected('missing signature headers', 401);
  if (toleranceSeconds !== null && Math.floor(atMs / 1000) - Number(timestamp) > toleranceSeconds)
    throw new SignatureRejected('timestamp too old', 401);
  const given = Buffer.from(signature, 'utf8');
  const wanted = Buffer.from(expectedSignature(rawBody, timestamp, secret), 'utf8');
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) throw new SignatureRejected('signature mismatch', 401);
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    throw new SignatureRejected('invalid payload', 400);
  }
  if (parsed === null || typeof parsed !== 'object') throw new SignatureRejected('invalid payload', 400);
  return parsed;
}
