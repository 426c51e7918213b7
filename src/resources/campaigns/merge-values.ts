// The values of a campaign's merge tags for one contact: {{first_name}}, {{last_name}},
// {{email}}, {{unsubscribe_url}}, {{cf.<key>}}. A blank field is left out rather than given as
// "", so that a Temple default (https://emailit.com/docs/templates/temple.md) applies to it:
// {{first_name|"there"}} reads "there" for a contact without a first name, and plain
// {{first_name}} still prints nothing.

export interface MergeContact {
  email: string;
  first_name: string | null;
  last_name: string | null;
  /** The contact's custom fields as stored (JSON text) or already parsed. */
  custom_fields: string | Record<string, unknown> | null;
}

const blank = (value: unknown) => value === null || value === undefined || (typeof value === 'string' && value.trim() === '');

function customFields(stored: MergeContact['custom_fields']): Record<string, unknown> {
  let fields: unknown = stored;
  if (typeof stored === 'string') {
    try {
      fields = JSON.parse(stored);
    } catch {
      fields = null;
    }
  }
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) return {};
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => !blank(value)));
}

export function campaignMergeValues(contact: MergeContact, unsubscribeUrl?: string): Record<string, unknown> {
  const values: Record<string, unknown> = { email: contact.email, cf: customFields(contact.custom_fields) };
  if (!blank(contact.first_name)) values.first_name = contact.first_name;
  if (!blank(contact.last_name)) values.last_name = contact.last_name;
  if (unsubscribeUrl !== undefined) values.unsubscribe_url = unsubscribeUrl;
  return values;
}
