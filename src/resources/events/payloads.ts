// The object each event type carries (`object` / `data.object`),
// https://emailit.com/docs/webhooks/event-types.md, as data: emitters and their tests check
// payloads with checkEventPayload, the webhook test delivery sends sampleEventObject, and the
// events API documents the known types from here.
import { newId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';

export interface PayloadShape {
  /** The `object` field's value. */
  object: string;
  /** Id prefixes the `id` may carry (without `_`). */
  idPrefixes: string[];
  /** Fields that must be present (null allowed unless listed in `notNull`). */
  fields: string[];
  notNull?: string[];
  /** Fields of nested objects that must be present. */
  nested?: Record<string, string[]>;
  /** A fixed value some field must have (e.g. the email status of a status event). */
  fixed?: Record<string, unknown>;
}

const EMAIL_ACCEPTED = ['id', 'object', 'from', 'to', 'subject', 'meta', 'timestamp'];
const EMAIL_STATUS = ['id', 'object', 'from', 'to', 'subject', 'status', 'meta', 'created_at', 'updated_at'];
const TRACKED_EMAIL = ['id', 'rcpt_to', 'mail_from', 'subject', 'created_at', 'meta'];
const CONTACT = ['id', 'object', 'email', 'first_name', 'last_name', 'custom_fields', 'unsubscribed', 'created_at', 'audiences'];
const SUBSCRIBER = ['id', 'object', 'subscribed', 'subscribed_at', 'unsubscribed_at', 'audience', 'contact', 'created_at'];
const SUPPRESSION = ['id', 'object', 'email', 'type', 'reason', 'created_at', 'keep_until'];
const TEMPLATE = [
  'id',
  'object',
  'name',
  'alias',
  'from',
  'subject',
  'reply_to',
  'html',
  'text',
  'editor',
  'published_at',
  'created_at',
  'updated_at',
];
const DOMAIN = ['id', 'object', 'name', 'tracking_key', 'inbound_key', 'track_loads', 'track_clicks', 'created_at', 'dns_records'];
const CAMPAIGN = ['id', 'object', 'name', 'status', 'subject', 'from_email', 'from_name', 'scheduled_at', 'sent_at', 'created_at'];
const VERIFICATION = ['id', 'object', 'email', 'status', 'score', 'risk', 'result', 'mode', 'checks', 'created_at', 'updated_at'];
const VERIFICATION_LIST = ['id', 'object', 'name', 'status', 'stats', 'created_at', 'updated_at'];

const email = (fields: string[], fixed?: Record<string, unknown>): PayloadShape => ({
  object: 'email',
  idPrefixes: ['em'],
  fields,
  notNull: ['id', 'from', 'to'],
  ...(fixed ? { fixed } : {}),
});
const statusEvent = (status: string) => email(EMAIL_STATUS, { status });

/** Every system event type with the shape of its object. */
export const PAYLOAD_SHAPES: Record<string, PayloadShape> = {
  'email.accepted': email(EMAIL_ACCEPTED),
  'email.scheduled': email([...EMAIL_ACCEPTED, 'scheduled_at', 'created_at'], undefined),
  'email.delivered': statusEvent('delivered'),
  'email.attempted': email([...EMAIL_STATUS, 'bounce_reason', 'bounce_type'], { status: 'attempted' }),
  'email.bounced': email([...EMAIL_STATUS, 'bounce_reason', 'bounce_type'], { status: 'bounced' }),
  'email.failed': email([...EMAIL_STATUS, 'bounce_reason', 'bounce_type'], { status: 'failed' }),
  'email.rejected': statusEvent('rejected'),
  'email.suppressed': statusEvent('suppressed'),
  'email.complained': email([...EMAIL_STATUS, 'bounce_reason', 'bounce_type'], { status: 'complained' }),
  'email.canceled': statusEvent('canceled'),
  'email.held': statusEvent('held'),
  'email.received': email(['id', 'object', 'from', 'to', 'subject', 'created_at']),
  'delivery.held': {
    object: 'delivery_hold',
    idPrefixes: ['hold'],
    fields: ['id', 'object', 'workspace_id', 'destination', 'domain', 'reason', 'created_at'],
    notNull: ['id'],
  },
  'delivery.released': {
    object: 'delivery_hold',
    idPrefixes: ['hold'],
    fields: ['id', 'object', 'workspace_id', 'destination', 'domain', 'reason', 'created_at'],
    notNull: ['id'],
  },
  'email.loaded': {
    object: 'load',
    idPrefixes: ['load'],
    fields: ['id', 'object', 'email', 'ip_address', 'user_agent', 'created_at'],
    notNull: ['id', 'email'],
    nested: { email: TRACKED_EMAIL },
  },
  'email.clicked': {
    object: 'click',
    idPrefixes: ['click'],
    fields: ['id', 'object', 'email', 'link', 'ip_address', 'user_agent', 'created_at'],
    notNull: ['id', 'email', 'link'],
    nested: { email: TRACKED_EMAIL, link: ['id', 'url'] },
  },
  'domain.created': { object: 'domain', idPrefixes: ['dom', 'sd', 'sed'], fields: DOMAIN, notNull: ['id', 'name'] },
  'domain.updated': {
    object: 'domain',
    idPrefixes: ['dom', 'sd', 'sed'],
    fields: [...DOMAIN, 'verified_at', 'dns_checked_at'],
    notNull: ['id', 'name'],
  },
  'domain.deleted': { object: 'domain', idPrefixes: ['dom', 'sd', 'sed'], fields: ['id', 'object', 'name'], notNull: ['id', 'name'] },
  'audience.created': { object: 'audience', idPrefixes: ['aud'], fields: ['id', 'object', 'name', 'created_at'], notNull: ['id'] },
  'audience.updated': { object: 'audience', idPrefixes: ['aud'], fields: ['id', 'object', 'name', 'created_at'], notNull: ['id'] },
  'audience.deleted': { object: 'audience', idPrefixes: ['aud'], fields: ['id', 'object', 'name'], notNull: ['id'] },
  'subscriber.created': {
    object: 'subscriber',
    idPrefixes: ['sub'],
    fields: SUBSCRIBER,
    notNull: ['id'],
    nested: { audience: ['id', 'name'], contact: ['id', 'email', 'first_name', 'last_name', 'custom_fields'] },
  },
  'subscriber.updated': {
    object: 'subscriber',
    idPrefixes: ['sub'],
    fields: [...SUBSCRIBER, 'updated_at'],
    notNull: ['id'],
    nested: { audience: ['id', 'name'], contact: ['id', 'email', 'first_name', 'last_name', 'custom_fields'] },
  },
  'subscriber.resubscribed': {
    object: 'subscriber',
    idPrefixes: ['sub'],
    fields: SUBSCRIBER,
    notNull: ['id'],
    nested: { audience: ['id', 'name'], contact: ['id', 'email', 'first_name', 'last_name', 'custom_fields'] },
  },
  'subscriber.deleted': {
    object: 'subscriber',
    idPrefixes: ['sub'],
    fields: SUBSCRIBER,
    notNull: ['id'],
    nested: { audience: ['id', 'name'], contact: ['id', 'email', 'first_name', 'last_name', 'custom_fields'] },
  },
  'contact.created': { object: 'contact', idPrefixes: ['con'], fields: CONTACT, notNull: ['id', 'email'] },
  'contact.updated': { object: 'contact', idPrefixes: ['con'], fields: [...CONTACT, 'updated_at', 'previous'], notNull: ['id', 'email'] },
  'contact.deleted': { object: 'contact', idPrefixes: ['con'], fields: CONTACT, notNull: ['id', 'email'] },
  'template.created': { object: 'template', idPrefixes: ['tem'], fields: TEMPLATE, notNull: ['id', 'name', 'alias'] },
  'template.updated': { object: 'template', idPrefixes: ['tem'], fields: TEMPLATE, notNull: ['id', 'name', 'alias'] },
  'template.deleted': { object: 'template', idPrefixes: ['tem'], fields: TEMPLATE, notNull: ['id', 'name', 'alias'] },
  'suppression.created': { object: 'suppression', idPrefixes: ['sup'], fields: SUPPRESSION, notNull: ['id', 'email', 'type'] },
  'suppression.updated': { object: 'suppression', idPrefixes: ['sup'], fields: SUPPRESSION, notNull: ['id', 'email', 'type'] },
  'suppression.deleted': { object: 'suppression', idPrefixes: ['sup'], fields: SUPPRESSION, notNull: ['id', 'email', 'type'] },
  'campaign.created': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.updated': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.scheduled': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.queued': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.sending': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.paused': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.resumed': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.sent': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.canceled': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.archived': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'campaign.deleted': { object: 'campaign', idPrefixes: ['cmp'], fields: CAMPAIGN, notNull: ['id'] },
  'email_verification.created': { object: 'email_verification', idPrefixes: ['ev'], fields: VERIFICATION, notNull: ['id', 'email'] },
  'email_verification.updated': { object: 'email_verification', idPrefixes: ['ev'], fields: VERIFICATION, notNull: ['id', 'email'] },
  'email_verification.deleted': { object: 'email_verification', idPrefixes: ['ev'], fields: ['id', 'object', 'email'], notNull: ['id'] },
  'email_verification_list.created': {
    object: 'email_verification_list',
    idPrefixes: ['evl'],
    fields: VERIFICATION_LIST,
    notNull: ['id'],
    fixed: { status: 'processing' },
  },
  'email_verification_list.updated': { object: 'email_verification_list', idPrefixes: ['evl'], fields: VERIFICATION_LIST, notNull: ['id'] },
  // The tracking script's identify: a visitor tied to an address (src/resources/tracking-keys/).
  'contact.identified': {
    object: 'identification',
    idPrefixes: ['idn'],
    fields: ['id', 'object', 'email', 'contact_id', 'anonymous_id', 'url', 'created_at'],
    notNull: ['id', 'email'],
  },
  'email_verification_list.deleted': {
    object: 'email_verification_list',
    idPrefixes: ['evl'],
    fields: ['id', 'object', 'name'],
    notNull: ['id'],
  },
};

export const SYSTEM_EVENT_TYPES = Object.keys(PAYLOAD_SHAPES);

/** Workspace (`w:`) and custom (`c:`) events: never part of `all_events`. */
export function isCustomEventType(type: string): boolean {
  return /^[wc]:.+/.test(type);
}

/** System types `all_events` leaves out (https://emailit.com/docs/api-reference/events/). */
export const NOT_IN_ALL_EVENTS = new Set(['cart.updated', 'product.viewed']);

/** Problems with an event object against its type's shape (empty: conforms). */
export function checkEventPayload(type: string, object: Record<string, unknown>): string[] {
  const shape = PAYLOAD_SHAPES[type];
  if (!shape) return isCustomEventType(type) ? [] : [`unknown event type ${type}`];
  const problems: string[] = [];
  if (object.object !== shape.object) problems.push(`object must be "${shape.object}", got ${JSON.stringify(object.object)}`);
  const id = object.id;
  if (typeof id !== 'string' || !shape.idPrefixes.some((p) => id.startsWith(`${p}_`))) {
    problems.push(`id must start with ${shape.idPrefixes.map((p) => `${p}_`).join(' or ')}, got ${JSON.stringify(id)}`);
  }
  for (const field of shape.fields) if (!(field in object)) problems.push(`missing field ${field}`);
  for (const field of shape.notNull ?? [])
    if (object[field] === null || object[field] === undefined) problems.push(`${field} must not be null`);
  for (const [field, subfields] of Object.entries(shape.nested ?? {})) {
    const value = object[field];
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`${field} must be an object`);
      continue;
    }
    for (const sub of subfields) if (!(sub in value)) problems.push(`missing field ${field}.${sub}`);
  }
  for (const [field, expected] of Object.entries(shape.fixed ?? {})) {
    if (object[field] !== expected) problems.push(`${field} must be ${JSON.stringify(expected)}, got ${JSON.stringify(object[field])}`);
  }
  return problems;
}

/** Realistic sample values for the fields the shapes name. */
function sampleValue(field: string, now: string): unknown {
  const samples: Record<string, unknown> = {
    from: 'Acme <hello@example.com>',
    to: 'jane@example.net',
    subject: 'Your order has shipped',
    meta: { order_id: '1042' },
    timestamp: now,
    created_at: now,
    updated_at: now,
    scheduled_at: now,
    status: 'delivered',
    ip_address: '203.0.113.7',
    user_agent: 'Mozilla/5.0',
    email: 'jane@example.net',
    first_name: 'Jane',
    last_name: 'Doe',
    custom_fields: {},
    unsubscribed: false,
    audiences: [],
    subscribed: true,
    subscribed_at: now,
    unsubscribed_at: null,
    type: 'recipient',
    reason: null,
    keep_until: null,
    name: 'Sample',
    alias: 'sample',
    reply_to: [],
    html: '<p>Hello</p>',
    text: 'Hello',
    editor: 'html',
    published_at: now,
    tracking_key: null,
    inbound_key: null,
    track_loads: false,
    track_clicks: false,
    dns_records: [],
    verified_at: null,
    dns_checked_at: null,
    from_email: '',
    from_name: '',
    sent_at: null,
    previous: {},
    score: 90,
    risk: 'low',
    result: 'safe',
    mode: 'fast',
    checks: { valid_syntax: true, disposable: false, role_account: false, has_mx_records: true },
    stats: { total_emails: 0, processed_emails: 0, successful_verifications: 0, failed_verifications: 0, pending_emails: 0 },
  };
  return field in samples ? samples[field] : null;
}

/** A sample object of `type` for test deliveries (custom types get a small free-form object). */
export function sampleEventObject(type: string): Record<string, unknown> {
  const now = nowIso();
  const shape = PAYLOAD_SHAPES[type];
  if (!shape) return { sample: true, created_at: now };
  const object: Record<string, unknown> = {};
  for (const field of shape.fields) object[field] = sampleValue(field, now);
  object.id = newId(shape.idPrefixes[0]);
  object.object = shape.object;
  for (const [field, subfields] of Object.entries(shape.nested ?? {})) {
    const nested: Record<string, unknown> = {};
    for (const sub of subfields)
      nested[sub] =
        sub === 'id'
          ? newId(field === 'link' ? 'link' : field === 'email' ? 'em' : field === 'audience' ? 'aud' : 'con')
          : sampleValue(sub, now);
    if (field === 'email' && type.startsWith('email.'))
      Object.assign(nested, { rcpt_to: 'jane@example.net', mail_from: 'hello@example.com' });
    if (field === 'link') nested.url = 'https://example.com/';
    object[field] = nested;
  }
  Object.assign(object, shape.fixed ?? {});
  return object;
}
