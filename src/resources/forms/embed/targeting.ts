// When a form shows (definition.targeting): on which pages, how often, after which trigger
// (a delay, a scroll depth, exit intent; the first that fires), and which experiment variant a
// visitor sees (by weight, kept for that visitor). Storage may be unavailable (privacy
// settings): then every check is made as for a first visit.
import type { Definition, Targeting } from '../definition.ts';

const DAY_MS = 86_400_000;

function read(storage: () => Storage, key: string): string | null {
  try {
    return storage().getItem(key);
  } catch {
    return null;
  }
}

function write(storage: () => Storage, key: string, value: string): void {
  try {
    storage().setItem(key, value);
  } catch {
    // storage refused: the visitor is treated as new next time
  }
}

const local = () => localStorage;
const session = () => sessionStorage;

/** `*` matches anything; a pattern with a scheme is matched against the whole URL. */
function matches(pattern: string, location: Location): boolean {
  const target = /^https?:/.test(pattern) ? location.href : location.pathname;
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(target);
}

export function onTargetedPage(targeting: Targeting, location: Location): boolean {
  const { include = [], exclude = [] } = targeting.pages ?? {};
  if (exclude.some((p) => matches(p, location))) return false;
  return include.length === 0 || include.some((p) => matches(p, location));
}

const key = (token: string, what: string) => `postlane:${token}:${what}`;

/** False once the visitor subscribed, or when the frequency says it was shown recently enough. */
export function dueForVisitor(token: string, targeting: Targeting, now = Date.now()): boolean {
  if (read(local, key(token, 'submitted'))) return false;
  const frequency = targeting.frequency ?? { mode: 'always' };
  const shownAt = Number(read(local, key(token, 'shown')) ?? 0);
  switch (frequency.mode) {
    case 'once':
      return !shownAt;
    case 'once_per_session':
      return !read(session, key(token, 'shown'));
    case 'every_n_days':
      return now - shownAt >= (frequency.days ?? 1) * DAY_MS;
    default:
      return true;
  }
}

export function rememberShown(token: string): void {
  write(local, key(token, 'shown'), String(Date.now()));
  write(session, key(token, 'shown'), '1');
}

export function rememberSubmitted(token: string): void {
  write(local, key(token, 'submitted'), '1');
}

/** Calls `show` once, when the first configured trigger fires (at once when none is set). */
export function whenTriggered(targeting: Targeting, show: () => void): void {
  let done = false;
  const cleanups: Array<() => void> = [];
  const fire = () => {
    if (done) return;
    done = true;
    cleanups.forEach((cleanup) => cleanup());
    show();
  };
  const { delay_seconds: delay, scroll_percent: scroll, exit_intent: exitIntent } = targeting;
  if (delay === undefined && scroll === undefined && !exitIntent) return fire();
  if (delay !== undefined) {
    const timer = setTimeout(fire, delay * 1000);
    cleanups.push(() => clearTimeout(timer));
  }
  if (scroll !== undefined) {
    const onScroll = () => {
      const root = document.documentElement;
      const depth = ((scrollY + innerHeight) / Math.max(root.scrollHeight, 1)) * 100;
      if (depth >= scroll) fire();
    };
    addEventListener('scroll', onScroll, { passive: true });
    cleanups.push(() => removeEventListener('scroll', onScroll));
    onScroll();
  }
  if (exitIntent) {
    // The pointer leaving through the top of the window, towards the tabs and the address bar.
    const onOut = (event: MouseEvent) => {
      if (!event.relatedTarget && event.clientY <= 0) fire();
    };
    document.addEventListener('mouseout', onOut);
    cleanups.push(() => document.removeEventListener('mouseout', onOut));
  }
}

export interface ChosenVariant {
  experimentId: string;
  variantId: string;
}

/** The visitor's variant of the definition's experiment: kept from an earlier visit, else drawn by weight. */
export function chooseVariant(token: string, definition: Definition, random = Math.random): ChosenVariant | null {
  const experiment = definition.experiments?.[0];
  if (!experiment) return null;
  const stored = read(local, key(token, 'variant'));
  const kept = experiment.variants.find((v) => `${experiment.id}/${v.id}` === stored && v.weight > 0);
  let chosen = kept;
  if (!chosen) {
    const total = experiment.variants.reduce((sum, v) => sum + v.weight, 0);
    let point = random() * total;
    chosen = experiment.variants.find((v) => (point -= v.weight) < 0 && v.weight > 0) ?? experiment.variants.find((v) => v.weight > 0);
    if (!chosen) return null;
    write(local, key(token, 'variant'), `${experiment.id}/${chosen.id}`);
  }
  return { experimentId: experiment.id, variantId: chosen.id };
}
