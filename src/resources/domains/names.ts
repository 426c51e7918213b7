// Domain names and subdomain labels. A sending domain is a registrable apex under an ICANN
// public suffix (tldts reads the Public Suffix List); no regex can know that `co.uk` is a
// suffix and `example.co.uk` an apex.
import { domainToASCII } from 'node:url';
import { excerpt } from '../../platform/http/errors.ts';
import { lazyModule } from '../../platform/lazy-module.ts';

// tldts (the Public Suffix List: about 1.5 MB of heap) loads with the first domain name checked.
const tldts = lazyModule<typeof import('tldts')>('tldts');

export type NameCheck = { ok: true; name: string } | { ok: false; error: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

// RFC 2606 / 6761 reserve these top-level names for testing and documentation; they are never
// delegated, so nobody can abuse them, and they let a lab or `postlane demo` use example.test.
const TESTING_SUFFIXES = new Set(['test', 'example']);

/** Validates a POST /domains `name`: the lowercase ASCII apex, or a reason for the 400. */
export function checkApexName(input: string): NameCheck {
  const raw = input.trim();
  if (raw === '') return { ok: false, error: 'Domain name is required' };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    return { ok: false, error: `Domain name must not include a scheme: use the bare domain, such as ${excerpt(suggest(raw))}` };
  }
  if (/[/?#@:\s]/.test(raw)) {
    return { ok: false, error: 'Domain name must be a bare domain such as example.com, without path, port, user or spaces' };
  }
  // International names are stored in their ASCII (punycode) form, as DNS uses them.
  const ascii = domainToASCII(raw.replace(/\.$/, '')).toLowerCase();
  if (ascii === '' || ascii.length > 253 || !ascii.split('.').every((label) => LABEL.test(label))) {
    return { ok: false, error: `"${excerpt(raw)}" is not a valid domain name` };
  }
  if (ascii.startsWith('www.')) {
    return { ok: false, error: `Domain name must not start with www.: use the apex domain ${ascii.slice(4)}` };
  }
  const labels = ascii.split('.');
  if (TESTING_SUFFIXES.has(labels[labels.length - 1])) {
    if (labels.length === 1) return { ok: false, error: `"${ascii}" is a public suffix, not a registrable domain` };
    const apex = labels.slice(-2).join('.');
    return apex === ascii
      ? { ok: true, name: ascii }
      : { ok: false, error: `"${ascii}" is not an apex domain: add the registrable domain ${apex}` };
  }
  const parsed = tldts().parse(ascii, { allowPrivateDomains: false });
  if (parsed.isIp) return { ok: false, error: 'Domain name must be a domain, not an IP address' };
  if (!parsed.isIcann) return { ok: false, error: `"${ascii}" does not end in a known public suffix (top-level domain)` };
  if (!parsed.domain) return { ok: false, error: `"${ascii}" is a public suffix, not a registrable domain` };
  if (parsed.domain !== ascii) {
    return { ok: false, error: `"${ascii}" is not an apex domain: add the registrable domain ${parsed.domain}` };
  }
  return { ok: true, name: ascii };
}

function suggest(raw: string): string {
  const host = raw
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .split(/[/?#:]/)[0]
    .replace(/^www\./i, '')
    .toLowerCase();
  return host || 'example.com';
}

export type LabelCheck = { ok: true; label: string | null } | { ok: false; error: string };

/** `tracking_key` / `inbound_key`: one DNS label of letters, digits and hyphens; null = default. */
export function checkLabel(field: string, value: string | null | undefined): LabelCheck {
  if (value === null || value === undefined) return { ok: true, label: null };
  const label = value.trim().toLowerCase();
  if (!LABEL.test(label)) {
    return {
      ok: false,
      error: `${field} must be one DNS label of letters, digits and hyphens (at most 63, not starting or ending with a hyphen)`,
    };
  }
  return { ok: true, label };
}

/** The exact name every `from` address of this domain must use (case-insensitive). */
export function normalizeHost(host: string): string {
  return host.trim().replace(/\.$/, '').toLowerCase();
}
