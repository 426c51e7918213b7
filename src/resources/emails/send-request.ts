// POST /emails bodies: validation (errors as the spec's `validation_errors` list), template
// resolution and Temple rendering, attachments, schedule and tracking, into an AcceptRequest.
import type { AppContext } from '../../platform/context.ts';
import { excerpt, messageError, sendValidationError } from '../../platform/http/errors.ts';
import { createResolver } from '../../platform/dns.ts';
import { renderTemple, TempleSyntaxError } from '../../templating/temple.ts';
import { resolveTemplateForSend } from '../templates/service.ts';
import { parseAddressField, formatAddress, type ParsedAddress } from './addresses.ts';
import { AttachmentFetchError, loadAttachments, validateAttachments } from './attachments.ts';
import { parseScheduledAt } from './scheduling.ts';
import type { AcceptRequest, TrackingRequest } from './accept.ts';

export const MAX_RECIPIENTS_PER_FIELD = 50;

// Headers the service writes itself; a user's value for them is ignored.
const RESERVED_HEADERS = new Set([
  'message-id',
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'reply-to',
  'date',
  'sender',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'dkim-signature',
  'return-path',
]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringOrList = (value: unknown) => typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'));

export interface SendBody {
  from?: unknown;
  to?: unknown;
  cc?: unknown;
  bcc?: unknown;
  reply_to?: unknown;
  subject?: unknown;
  html?: unknown;
  text?: unknown;
  template?: unknown;
  variables?: unknown;
  attachments?: unknown;
  headers?: unknown;
  meta?: unknown;
  scheduled_at?: unknown;
  tracking?: unknown;
}

function recipientField(name: string, value: unknown, required: boolean, errors: string[]): ParsedAddress[] {
  if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)) {
    if (required) errors.push(`The ${name} field is required.`);
    return [];
  }
  if (!isStringOrList(value)) {
    errors.push(`The ${name} field must be a string or an array of strings.`);
    return [];
  }
  const { addresses, invalid } = parseAddressField(value);
  for (const entry of invalid) errors.push(`The ${name} field contains an invalid email address: ${excerpt(entry)}`);
  const unique: ParsedAddress[] = [];
  const seen = new Set<string>();
  for (const address of addresses) {
    const key = address.address.toLowerCase();
    if (!seen.has(key)) unique.push(address), seen.add(key);
  }
  if (unique.length > MAX_RECIPIENTS_PER_FIELD)
    errors.push(`The ${name} field may not have more than ${MAX_RECIPIENTS_PER_FIELD} recipients.`);
  if (required && invalid.length === 0 && unique.length === 0) errors.push(`The ${name} field is required.`);
  return unique;
}

function optionalString(name: string, value: unknown, errors: string[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') errors.push(`The ${name} field must be a string.`);
  return typeof value === 'string' ? value : undefined;
}

function stringMap(name: string, value: unknown, errors: string[]): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) {
    errors.push(`The ${name} field must be an object.`);
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') errors.push(`The ${name}.${key} value must be a string.`);
  }
  return value as Record<string, string>;
}

function trackingField(value: unknown, errors: string[]): TrackingRequest {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  if (isObject(value)) {
    for (const key of ['loads', 'clicks']) {
      if (value[key] !== undefined && typeof value[key] !== 'boolean') errors.push(`The tracking.${key} field must be a boolean.`);
    }
    return value as { loads?: boolean; clicks?: boolean };
  }
  errors.push('The tracking field must be a boolean or an object with loads and clicks.');
  return undefined;
}

function render(source: string | null, field: string, variables: Record<string, unknown>, html: boolean, errors: string[]): string | null {
  if (source === null) return null;
  try {
    return renderTemple(source, variables, { html });
  } catch (error) {
    if (error instanceof TempleSyntaxError) {
      errors.push(`The ${field} has invalid variable syntax at line ${error.line}, column ${error.column}: ${error.message}`);
      return source;
    }
    throw error;
  }
}

/** Turns a POST /emails body into an AcceptRequest, or throws the spec's 400/404 errors. */
export async function buildSendRequest(ctx: AppContext, workspaceId: string, body: SendBody): Promise<AcceptRequest> {
  if (!isObject(body)) throw sendValidationError(['The request body must be a JSON object.']);
  const errors: string[] = [];

  const templateRef = optionalString('template', body.template, errors);
  const template = templateRef ? await resolveTemplateForSend(ctx.db, workspaceId, templateRef) : null;
  if (templateRef && !template) {
    throw messageError(404, 'Template not found', `No published template "${templateRef}" or template version with that id exists.`);
  }

  const fromValue = body.from ?? template?.from ?? undefined;
  const fromList = recipientField('from', fromValue, true, errors);
  if (fromList.length > 1) errors.push('The from field must be a single address.');
  const to = recipientField('to', body.to, true, errors);
  const cc = recipientField('cc', body.cc, false, errors);
  const bcc = recipientField('bcc', body.bcc, false, errors);
  const replyTo =
    body.reply_to !== undefined && body.reply_to !== null
      ? recipientField('reply_to', body.reply_to, false, errors)
      : template?.reply_to
        ? parseAddressField(template.reply_to).addresses
        : [];

  const subjectSource = optionalString('subject', body.subject, errors) ?? template?.subject ?? null;
  const htmlSource = optionalString('html', body.html, errors) ?? template?.html ?? null;
  const textSource = optionalString('text', body.text, errors) ?? template?.text ?? null;
  if (subjectSource === null || subjectSource.trim() === '') errors.push('The subject field is required.');
  if ((htmlSource === null || htmlSource === '') && (textSource === null || textSource === '')) {
    errors.push('Either the html or the text field is required.');
  }

  let variables: Record<string, unknown> = {};
  if (body.variables !== undefined && body.variables !== null) {
    if (isObject(body.variables)) variables = body.variables;
    else errors.push('The variables field must be an object.');
  }
  const headers = stringMap('headers', body.headers, errors) ?? {};
  const meta = stringMap('meta', body.meta, errors);
  const tracking = trackingField(body.tracking, errors);
  errors.push(...validateAttachments(body.attachments));
  if (body.scheduled_at !== undefined && body.scheduled_at !== null && typeof body.scheduled_at !== 'string') {
    errors.push('The scheduled_at field must be a string.');
  }
  if (errors.length > 0) throw sendValidationError(errors);

  // Temple runs on sends that use a template or variables; other content is sent as written.
  const templated = template !== null || body.variables !== undefined;
  const subject = templated ? render(subjectSource, 'subject', variables, false, errors)! : subjectSource!;
  const html = templated ? render(htmlSource, 'html', variables, true, errors) : htmlSource;
  const text = templated ? render(textSource, 'text', variables, false, errors) : textSource;
  if (errors.length > 0) throw sendValidationError(errors);

  let attachments;
  try {
    attachments = await loadAttachments(body.attachments, () => createResolver(ctx.config.dnsServers), ctx.config.allowPrivateUrls);
  } catch (error) {
    if (error instanceof AttachmentFetchError) throw sendValidationError([error.message]);
    throw error;
  }

  const extraHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!RESERVED_HEADERS.has(name.toLowerCase()) && /^[!-9;-~]+$/.test(name)) extraHeaders[name] = value.replace(/[\r\n]+/g, ' ');
  }

  const from = fromList[0];
  return {
    message: {
      from,
      to,
      cc,
      bcc,
      reply_to: replyTo,
      subject: subject.replace(/[\r\n]+/g, ' '),
      html,
      text,
      headers: extraHeaders,
      attachments,
    },
    fromHeader: typeof fromValue === 'string' && fromValue.trim() ? fromValue.trim() : formatAddress(from),
    meta,
    scheduledAt: parseScheduledAt(body.scheduled_at),
    tracking,
    source: 'api',
  };
}
