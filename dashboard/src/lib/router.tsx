// A small history router (the dashboard's pages are a flat list, see pages/index.ts):
// paths under /dashboard, `:name` segments as params, links that never reload the page.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/dashboard';
const listeners = new Set<() => void>();

export function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return path.replace(/\/+$/, '') || '/';
}

let visits = 0;

/** Counts navigations: a page keyed by it loads afresh even when its link is followed again. */
export function visitCount(): number {
  return visits;
}

export function navigate(path: string, replace = false): void {
  visits++;
  const url = `${BASE}${path === '/' ? '/' : path}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
  window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  const [, setVisit] = useState(visits);
  useEffect(() => {
    const update = () => {
      setPath(currentPath());
      setVisit(visits); // re-renders even when the path is the same
    };
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return path;
}

/** Params of `pattern` (e.g. `/domains/:id`) in `path`, or null when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(have[i]);
    else if (want[i] !== have[i]) return null;
  }
  return params;
}

export interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page';
  onClick?: () => void;
}

export function Link({ href, children, onClick, ...rest }: LinkProps) {
  return (
    <a
      {...rest}
      href={`${BASE}${href}`}
      onClick={(event) => {
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        navigate(href);
        onClick?.();
      }}
    >
      {children}
    </a>
  );
}
