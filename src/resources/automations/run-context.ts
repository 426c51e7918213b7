// What a run carries and the engine hands each of its steps: the run's rows, the input that
// starts one, and its scope (the contact, email, payload and meta that placeholders and
// conditions read).
import type { Selectable } from 'kysely';
import type { Executor } from '../../platform/db/database.ts';
import { customFieldsOf, findContact, type ContactRow } from '../contacts/service.ts';
import type { AutomationRunsTable, AutomationRunStepsTable } from './tables.ts';

export type RunRow = Selectable<AutomationRunsTable>;
export type RunStepRow = Selectable<AutomationRunStepsTable>;

/** Thrown inside a transaction to roll it back when a run must not start (the reason kept). */
export class RunSkipped extends Error {}

export interface RunInput {
  triggerKey: string;
  event: string;
  eventId: string | null;
  payload: Record<string, unknown>;
  meta: Record<string, unknown>;
  contactId: string | null;
  emailId: string | null;
}

export interface Scope {
  contact: Record<string, unknown> | null;
  email: Record<string, unknown> | null;
  payload: Record<string, any>;
  meta: Record<string, unknown>;
  run: { id: string; automation_id: string };
}

export const SCOPE_ROOTS = ['contact', 'email', 'payload', 'meta', 'run'] as const;

export async function scopeOf(db: Executor, run: RunRow): Promise<{ scope: Scope; contact: ContactRow | null }> {
  const contact = run.contact_id ? ((await findContact(db, run.workspace_id, run.contact_id)) ?? null) : null;
  const email = run.email_id
    ? await db
        .selectFrom('emails')
        .selectAll()
        .where('workspace_id', '=', run.workspace_id)
        .where('id', '=', run.email_id)
        .executeTakeFirst()
    : undefined;
  return {
    contact,
    scope: {
      contact: contact
        ? {
            id: contact.id,
            email: contact.email,
            first_name: contact.first_name,
            last_name: contact.last_name,
            unsubscribed: contact.unsubscribed === 1,
            custom_fields: customFieldsOf(contact),
            ...customFieldsOf(contact),
          }
        : null,
      email: email
        ? {
            id: email.id,
            from: email.from,
            mail_from: email.from_address,
            to: email.to,
            subject: email.subject,
            status: email.status,
            message_id: email.message_id,
            created_at: email.created_at,
          }
        : null,
      payload: JSON.parse(run.payload),
      meta: JSON.parse(run.meta),
      run: { id: run.id, automation_id: run.automation_id },
    },
  };
}

function valueAt(root: unknown, path: string[]): unknown {
  let value = root;
  for (const segment of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** `{{contact.email}}`, `{{payload.object.subject}}`, … replaced in every string of `value`;
 *  other `{{…}}` (Temple variables of a template) are left for the template. */
export function withPlaceholders(value: unknown, scope: Scope): any {
  if (typeof value === 'string') {
    return value.replace(/\{\{\s*((?:contact|email|payload|meta|run)(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g, (_m, path: string) => {
      const [root, ...rest] = path.split('.');
      const found = valueAt((scope as any)[root], rest);
      if (found === undefined || found === null) return '';
      return typeof found === 'object' ? JSON.stringify(found) : String(found);
    });
  }
  if (Array.isArray(value)) return value.map((v) => withPlaceholders(v, scope));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withPlaceholders(v, scope)]));
  return value;
}
