// Every error body shape of https://emailit.com/docs/api-reference/errors.md, as something a
// service can throw. The HTTP error handler sends `status` and `body` as they are; a service never
// formats responses.

export class ApiError extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    super(String(body.message ?? body.error ?? `HTTP ${status}`));
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
};

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? 'Error';
}

/** Input quoted back in an error message, cut short: the message names the bad value, it does
 *  not send back the megabyte a client put in a field. */
export function excerpt(text: string, max = 100): string {
  return text.length <= max ? text : `${text.slice(0, max).toWellFormed()}… (${text.length.toLocaleString('en')} characters)`;
}

/** `{error}`: many 400, 404, 409, 422 cases. */
export const plainError = (status: number, error: string) => new ApiError(status, { error });

/** `{error, message}`: 402, 403, 404, 413, 429, 409 idempotency, 503. */
export const messageError = (status: number, error: string, message: string, extra: Record<string, unknown> = {}) =>
  new ApiError(status, { error, message, ...extra });

/** `{error, existing}`: 409 duplicate name, address or email. */
export const conflictError = (error: string, existing: Record<string, unknown>) => new ApiError(409, { error, existing });

/** `{statusCode, error, message}`: errors raised before the endpoint runs (auth, permission, JSON). */
export const frameworkError = (status: number, message: string) =>
  new ApiError(status, { statusCode: status, error: reasonPhrase(status), message });

export interface ValidationDetail {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
}

/** The standard validation error (400) with Ajv-style `details`. */
export const standardValidationError = (message: string, details: ValidationDetail[]) =>
  new ApiError(400, { statusCode: 400, error: 'Bad Request', message, details });

/** `{message:'Validation failed', errors:{field:[text]}}`: field validation (400 templates, 422 MJML). */
export const fieldValidationError = (errors: Record<string, string[]>, status = 400, extra: Record<string, unknown> = {}) =>
  new ApiError(status, { message: 'Validation failed', errors, ...extra });

/** `{error:'Validation failed', validation_errors:[text]}`: send and forward validation (400). */
export const sendValidationError = (validationErrors: string[]) =>
  new ApiError(400, { error: 'Validation failed', validation_errors: validationErrors });

/** `{error:'plan_required', required_plan}`: 403 plan-gated feature. */
export const planRequiredError = (requiredPlan: string, message?: string) =>
  new ApiError(403, { error: 'plan_required', required_plan: requiredPlan, ...(message ? { message } : {}) });

export const unauthorized = (headers: Record<string, string> = {}) =>
  new ApiError(401, frameworkError(401, 'Invalid API key').body, headers);

export const forbiddenScope = (permission: string) =>
  frameworkError(403, `This API key does not have the "${permission}" permission required for this endpoint`);

export const invalidJson = () => frameworkError(400, 'Invalid JSON in request body');

/** `limit` bytes for a person: 50 MB, 256 KB, 16 KB, 100 bytes. */
export function byteSize(limit: number): string {
  if (limit >= 1024 * 1024 && limit % (1024 * 1024) === 0) return `${limit / (1024 * 1024)} MB`;
  if (limit >= 1024 && limit % 1024 === 0) return `${limit / 1024} KB`;
  return `${limit.toLocaleString('en')} bytes`;
}

/** 413: the body is over the limit that applies to the route (`limit` bytes). */
export const bodyTooLarge = (limit: number) => frameworkError(413, `Request body is larger than ${byteSize(limit)}`);
