// The checks of an address that need no network (`fast` mode of
// https://emailit.com/docs/api-reference/email-verifications.md, minus DNS): syntax, the address
// split into mailbox/suffix/domain/root, disposable domain, role account, free provider, gibberish
// mailbox, and a "did you mean" for misspelt big providers. The lists come from maintained packages
// (README "Libraries"): mailchecker (disposable domains), email-providers (free providers),
// role-based-email-addresses (role mailboxes), @zootools/email-spell-checker (misspellings).
import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';

// The lists are loaded on first use, not at start: together they take a few hundred
// milliseconds to load, which every process start and CLI command would otherwise pay.
const require = createRequire(import.meta.url);
interface Lists {
  disposable: Set<string>;
  free: Set<string>;
  /** The providers with real traffic (a Majestic rank under 100,000): never typos of another. */
  established: Set<string>;
  roles: Set<string>;
  spellChecker: { run(options: Record<string, unknown>): { domain: string; full: string } | undefined; POPULAR_DOMAINS: string[] };
}
let loaded: Lists | null = null;
function lists(): Lists {
  loaded ??= {
    disposable: (require('mailchecker') as { blacklist(): Set<string> }).blacklist(),
    free: new Set(require('email-providers/all.json') as string[]),
    established: new Set(require('email-providers/common.json') as string[]),
    roles: new Set(require('role-based-email-addresses') as string[]),
    spellChecker: require('@zootools/email-spell-checker') as Lists['spellChecker'],
  };
  return loaded;
}

export interface AddressParts {
  /** The local part without a `+suffix`. */
  mailbox: string;
  domain: string;
  /** What followed `+` in the local part, or null. */
  suffix: string | null;
  /** mailbox@domain: the address without its suffix. */
  root: string;
}

// Dot-atom local part (RFC 5322 atext, letters and digits of any script for SMTPUTF8), no
// leading, trailing or doubled dots; quoted local parts are not accepted by mail services in
// practice and are reported as invalid syntax.
const LOCAL = /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;
const LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;
const ASCII_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The address trimmed and lowercased, as lists store it. */
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}

/** The parts of a syntactically valid address, or null (RFC 5321 limits: 64 + 255, 254 in all). */
export function parseAddress(email: string): AddressParts | null {
  const address = normalizeEmail(email);
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1 || address.length > 254) return null;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local.length > 64 || !LOCAL.test(local) || !validDomain(domain)) return null;
  const plus = local.indexOf('+');
  const mailbox = plus > 0 ? local.slice(0, plus) : local;
  const suffix = plus > 0 && plus < local.length - 1 ? local.slice(plus + 1) : null;
  return { mailbox, domain, suffix, root: `${mailbox}@${domain}` };
}

function validDomain(domain: string): boolean {
  if (domain.length > 253) return false;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return false;
  // The name DNS sees (IDNA): every label must survive the conversion.
  const ascii = domainToASCII(domain);
  if (ascii === '' || !ascii.split('.').every((label) => ASCII_LABEL.test(label))) return false;
  // A top-level domain is never all digits (that is an IP address, not a mail domain).
  return !/^\d+$/.test(labels[labels.length - 1]);
}

/** The domain as DNS is asked about it (punycode for internationalized names). */
export function dnsName(domain: string): string {
  return domainToASCII(domain) || domain;
}

/** A throwaway-mail domain, or a subdomain of one. */
export function isDisposableDomain(domain: string): boolean {
  const labels = domain.split('.');
  const { disposable } = lists();
  for (let i = 0; i < labels.length - 1; i++) if (disposable.has(labels.slice(i).join('.'))) return true;
  return false;
}

/** A mailbox that belongs to a role or team (info@, support@, sales@) rather than a person. */
export function isRoleMailbox(mailbox: string): boolean {
  return lists().roles.has(mailbox);
}

/** A free mailbox provider (gmail.com, gmx.de, …). */
export function isFreeProvider(domain: string): boolean {
  return lists().free.has(domain);
}

// Keyboard rows: a run of five keys in a row is typed, not a name.
const KEYBOARD_ROWS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm', '1234567890'];
const VOWELS = /[aeiouyàáâãäåæèéêëìíîïòóôõöøùúûü]/g;

/**
 * A mailbox that looks randomly typed or generated. Our own heuristic rather than a Markov
 * model package: the one on the registry (gibberish-detective, trained on English prose)
 * flags short and non-English names (mike, nguyen, maria.garcia) as gibberish. Ours flags:
 * a letter run of 6+ with almost no vowels or 6+ consonants in a row, five keys of a keyboard
 * row in sequence, or letters and digits alternating 4+ times.
 */
export function isGibberish(mailbox: string): boolean {
  const text = mailbox.toLowerCase();
  for (const row of KEYBOARD_ROWS) {
    for (let i = 0; i + 5 <= row.length; i++) if (text.includes(row.slice(i, i + 5))) return true;
  }
  const switches = (text.replace(/[^a-z0-9]/g, '').match(/(?<=[a-z])[0-9]|(?<=[0-9])[a-z]/g) ?? []).length;
  if (switches >= 4) return true;
  for (const word of text.split(/[^\p{L}]+/u)) {
    if (word.length < 6) continue;
    const vowels = (word.match(VOWELS) ?? []).length;
    if (vowels / word.length < 0.15) return true;
    if (/[bcdfghjklmnpqrstvwxz]{6,}/.test(word)) return true;
  }
  return false;
}

// The big providers whose misspellings are worth a suggestion, beside the spell checker's own.
const BIG_PROVIDERS = [
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'yahoo.co.uk',
  'yahoo.fr',
  'ymail.com',
  'hotmail.com',
  'hotmail.co.uk',
  'hotmail.fr',
  'outlook.com',
  'live.com',
  'msn.com',
  'icloud.com',
  'me.com',
  'aol.com',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  'mail.ru',
  'yandex.ru',
  'yandex.com',
  'proton.me',
  'protonmail.com',
  'zoho.com',
  'comcast.net',
  'qq.com',
  '163.com',
];
let bigProviders: string[] | null = null;

/** The address with a misspelt big provider corrected (jane@gmial.com → jane@gmail.com), or null. */
export function didYouMean(parts: AddressParts, original: string): string | null {
  const { spellChecker, established } = lists();
  bigProviders ??= [...new Set([...spellChecker.POPULAR_DOMAINS, ...BIG_PROVIDERS])];
  // An established provider of its own (gmx.at is not a typo of gmx.de) gets no suggestion.
  if (bigProviders.includes(parts.domain) || established.has(parts.domain)) return null;
  const local = original.slice(0, original.lastIndexOf('@'));
  // Whole domains only: no guesses from the second-level name or the TLD alone (acme.test → acme.de).
  const suggestion = spellChecker.run({
    email: `${local}@${parts.domain}`,
    domains: bigProviders,
    secondLevelDomains: [],
    topLevelDomains: [],
  });
  return suggestion && suggestion.domain !== parts.domain ? suggestion.full : null;
}
