// The one check of an email address that every feature applies to what a user writes
// (suppressions, contacts, subscribers, forms), so that all of them agree on what an address is.
import { plainError } from './http/errors.ts';

const MAX_ADDRESS = 254;
// A practical address check: one @, no spaces or specials in the local part, a dotted domain.
const ADDRESS =
  /^[^\s@"<>(),;:\\[\]]{1,64}@(?=.{1,253}$)[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?)+$/u;

/** The address trimmed and in lowercase, or null when it is not an email address. */
export function normalizeAddress(value: string): string | null {
  const address = value.trim().toLowerCase();
  if (address.length > MAX_ADDRESS || !ADDRESS.test(address)) return null;
  return address;
}

/** Like normalizeAddress, but an invalid address is the spec's 400 `{error}`. */
export function requireAddress(value: string): string {
  const address = normalizeAddress(value);
  if (address === null) throw plainError(400, 'Invalid email address');
  return address;
}
