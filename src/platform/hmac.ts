// HMAC-SHA256 with keys prepared once. Given a Buffer or a string, node:crypto makes a secret
// KeyObject on every createHmac: 20 µs a MAC against 4 µs with a KeyObject here (node 24), and
// a campaign email takes four MACs (VERP envelope, unsubscribe link and mailbox, tracking) with
// a handful of long-lived keys. Byte keys are cached by identity, so one must not be mutated
// (a Buffer sent to a worker thread arrives as a Uint8Array: both kinds are byte keys).
import { createHmac, createSecretKey, KeyObject } from 'node:crypto';

export type HmacSecret = Uint8Array | string | KeyObject;

const byteKeys = new WeakMap<Uint8Array, KeyObject>();
const stringKeys = new Map<string, KeyObject>();
/** String keys are webhook secrets, one per endpoint: bounded, oldest dropped first. */
const MAX_STRING_KEYS = 1024;
const subkeys = new WeakMap<Uint8Array, Map<string, KeyObject>>();

function keyOf(secret: HmacSecret): KeyObject {
  if (typeof secret === 'string') {
    let key = stringKeys.get(secret);
    if (!key) {
      if (stringKeys.size >= MAX_STRING_KEYS) stringKeys.delete(stringKeys.keys().next().value!);
      stringKeys.set(secret, (key = createSecretKey(secret, 'utf8')));
    }
    return key;
  }
  if (secret instanceof KeyObject) return secret;
  let key = byteKeys.get(secret);
  if (!key) byteKeys.set(secret, (key = createSecretKey(secret)));
  return key;
}

export function hmacSha256(secret: HmacSecret, data: string): Buffer {
  return createHmac('sha256', keyOf(secret)).update(data).digest();
}

/** HMAC-SHA256(secret, label) as a key of its own (one key per purpose), made once. */
export function subkey(secret: Uint8Array, label: string): KeyObject {
  let byLabel = subkeys.get(secret);
  if (!byLabel) subkeys.set(secret, (byLabel = new Map()));
  let key = byLabel.get(label);
  if (!key) byLabel.set(label, (key = createSecretKey(hmacSha256(secret, label))));
  return key;
}
