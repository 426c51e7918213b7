// Links from an event's object (or a webhook request's) to the pages of the things it is about:
// its own id when it has a page, and the ids it names (the email of a click, a subscription's
// contact, a campaign's audience…). Known by the ids' prefixes.
import { Link } from '../lib/router';

const PAGES: Array<[prefix: string, path: string, what: string]> = [
  ['em_', '/emails/', 'Email'],
  ['con_', '/contacts/', 'Contact'],
  ['cmp_', '/campaigns/', 'Campaign'],
  ['aud_', '/audiences/', 'Audience'],
  ['dom_', '/domains/', 'Domain'],
  ['wh_', '/webhooks/', 'Webhook'],
  ['tem_', '/templates/', 'Template'],
  ['aut_', '/automations/', 'Automation'],
  ['frm_', '/forms/', 'Form'],
  ['evl_', '/verification/', 'Verification list'],
];

/** The dashboard page of an id, if it has one. */
export function pageOf(id: string): { href: string; what: string } | null {
  const page = PAGES.find(([prefix]) => id.startsWith(prefix));
  return page ? { href: `${page[1]}${encodeURIComponent(id)}`, what: page[2] } : null;
}

type Obj = Record<string, unknown>;
const isId = (v: unknown): v is string => typeof v === 'string' && /^[a-z]+_[A-Za-z0-9]{8,}$/.test(v);

/** Ids an object names, its own first: `id`, nested objects' ids (email.id) and `…_id` fields. */
export function idsOf(object: Obj | null | undefined): string[] {
  if (!object) return [];
  const ids: string[] = [];
  const add = (v: unknown) => {
    if (isId(v) && !ids.includes(v)) ids.push(v);
  };
  add(object.id);
  for (const [key, value] of Object.entries(object)) {
    if (key.endsWith('_id')) add(value);
    else if (value && typeof value === 'object' && !Array.isArray(value)) add((value as Obj).id);
  }
  return ids;
}

/** Every id of the object: a link where it has a page, plain code where not. */
export function ObjectLinks({ object }: { object: Obj | null | undefined }) {
  const ids = idsOf(object);
  if (ids.length === 0) return <span class="muted">—</span>;
  return (
    <span class="object-links">
      {ids.map((id) => {
        const page = pageOf(id);
        return page ? (
          <Link href={page.href}>
            <span class="visually-hidden">{page.what} </span>
            {id}
          </Link>
        ) : (
          <code>{id}</code>
        );
      })}
    </span>
  );
}
