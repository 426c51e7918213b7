// The one seam between the delivery engine and mail that differs per recipient (campaigns):
// a resource registers a personalizer for the emails of its `source`; at delivery the engine
// asks it for the recipient's merge values, To address and List-Unsubscribe, and the build
// thread renders the shared stored content with them. Templates are compiled once per content
// and kept; bodies are never stored per recipient. The engine imports nothing above it: the
// campaign resource hands its personalizer in.
import type { Db } from '../../../platform/db/database.ts';
import type { ListUnsubscribe } from '../../../mail/compose.ts';
import { parseTemple, type TempleTemplate } from '../../../templating/temple.ts';
import type { StoredMessage } from '../content.ts';
import type { EmailRow } from '../objects.ts';

export interface Personalization {
  /** The recipient shown in To (the stored content of a campaign has none). */
  to?: string;
  /** Merge values: `{{first_name}}`, `{{cf.key}}`, `{{unsubscribe_url}}` … */
  values: Record<string, unknown>;
  listUnsubscribe?: ListUnsubscribe | null;
  /** Links left as they are when clicks are tracked (the unsubscribe link). */
  untracked?: string[];
}

export type Personalizer = (email: EmailRow) => Promise<Personalization | null>;

const personalizers = new Map<Db, Map<string, Personalizer>>();

/** Registers the personalizer of emails with `source` delivered from `db`. */
export function registerPersonalizer(db: Db, source: string, personalizer: Personalizer): void {
  let bySource = personalizers.get(db);
  if (!bySource) personalizers.set(db, (bySource = new Map()));
  bySource.set(source, personalizer);
}

export function forgetPersonalizers(db: Db): void {
  personalizers.delete(db);
}

/** What this email's copy needs beyond its stored content, or null (most mail). */
export function personalizationFor(db: Db, email: EmailRow): Promise<Personalization | null> {
  const personalizer = personalizers.get(db)?.get(email.source);
  return personalizer ? personalizer(email) : Promise.resolve(null);
}

// Compiled templates of the contents being delivered (in the build thread), by content and part.
const compiled = new Map<string, TempleTemplate | null>();
const MAX_COMPILED = 64;

function render(key: string, source: string | null, values: Record<string, unknown>, html: boolean): string | null {
  if (source === null) return null;
  let template = compiled.get(key);
  if (template === undefined) {
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    try {
      template = parseTemple(source);
    } catch {
      template = null; // not a valid template: sent as written
    }
    compiled.set(key, template);
  }
  return template ? template.render(values, { html }) : source;
}

/** The stored content as this recipient's copy: merge tags filled, addressed to them. */
export function personalizeMessage(email: Pick<EmailRow, 'content_id'>, stored: StoredMessage, personal: Personalization): StoredMessage {
  return {
    ...stored,
    to: personal.to ? [{ address: personal.to, name: '' }] : stored.to,
    html: render(`${email.content_id}:html`, stored.html, personal.values, true),
    text: render(`${email.content_id}:text`, stored.text, personal.values, false),
  };
}
