// Response schemas shared by every route: the error shapes of
// https://emailit.com/docs/api-reference/errors.md as named OpenAPI components (registered once
// with `addSchema`, referenced by `$ref`), and the defaults every route gets without naming them
// (401/403 before the endpoint runs, 400 for a request its schemas refuse, 500).
//
// A route lists its own statuses beside its schemas, e.g.
//   response: { 200: Contact, ...errorResponses({ 404: 'error', 409: 'conflict' }) }
// Success bodies are TypeBox objects of the resource (its schemas.ts); Fastify serializes
// responses from them, so a field a schema does not name is never sent.
import { Type, type TSchema } from '@sinclair/typebox';

const text = (description: string) => Type.String({ description });

// Error bodies keep fields beyond the shape's own (`code`, `blocked_recipients`, the credits
// of a 402, `limit`/`current`/`retry_after` of a 429) so a service's ApiError is sent whole.
const open = { additionalProperties: true };

export const errorComponents = {
  /** `{error}`: many 400, 404, 409, 422 cases. */
  error: Type.Object({ error: text('What went wrong') }, { $id: 'Error', title: 'Error', ...open }),
  /** `{error, message}`: 402, 403, 404, 413, 429, 409 idempotency, 503. */
  errorMessage: Type.Object(
    { error: text('Short error'), message: text('What went wrong, for a person') },
    { $id: 'ErrorWithMessage', title: 'ErrorWithMessage', ...open },
  ),
  /** `{message}`: template not found (as the Emailit API documents for templates). */
  message: Type.Object({ message: text('What went wrong') }, { $id: 'MessageError', title: 'MessageError', ...open }),
  /** `{error, existing}`: 409 duplicate name, address or email. */
  conflict: Type.Object(
    { error: text('Short error'), existing: Type.Object({}, { additionalProperties: true, description: 'The object already there' }) },
    { $id: 'ConflictError', title: 'ConflictError', ...open },
  ),
  /** The standard validation error (400). */
  validation: Type.Object(
    {
      statusCode: Type.Integer({ description: 'HTTP status (400)' }),
      error: text('Bad Request'),
      message: text('The first problem, for a person'),
      details: Type.Array(
        Type.Object({
          instancePath: text('JSON pointer of the offending value'),
          schemaPath: text('Schema rule that failed'),
          keyword: text('Failed keyword'),
          params: Type.Object({}, { additionalProperties: true, description: 'Keyword parameters' }),
          message: text('What is wrong with the value'),
        }),
        { description: 'Every problem found' },
      ),
    },
    { $id: 'ValidationError', title: 'ValidationError', ...open },
  ),
  /** `{message:'Validation failed', errors:{field:[text]}}`. */
  fieldValidation: Type.Object(
    {
      message: text('Validation failed'),
      errors: Type.Record(Type.String(), Type.Array(Type.String()), { description: 'Messages by field path' }),
    },
    { $id: 'FieldValidationError', title: 'FieldValidationError', ...open },
  ),
  /** `{error:'Validation failed', validation_errors:[text]}`: send and forward validation. */
  sendValidation: Type.Object(
    { error: text('Validation failed'), validation_errors: Type.Array(Type.String(), { description: 'Each problem, for a person' }) },
    { $id: 'SendValidationError', title: 'SendValidationError', ...open },
  ),
  /** `{error:'plan_required', required_plan}`: 403 plan-gated feature. */
  planRequired: Type.Object(
    {
      error: Type.Literal('plan_required', { description: 'Always plan_required' }),
      required_plan: text('Lowest plan with the feature'),
      message: Type.Optional(text('Explanation')),
    },
    { $id: 'PlanRequiredError', title: 'PlanRequiredError', ...open },
  ),
  /** 429 `{error, message, limit, current, retry_after}`. */
  rateLimit: Type.Object(
    {
      error: text('Short error'),
      message: text('Which limit, for a person'),
      limit: Type.Optional(Type.Number({ description: 'The limit' })),
      current: Type.Optional(Type.Number({ description: 'Use counted against it' })),
      retry_after: Type.Optional(Type.Number({ description: 'Seconds to wait (also the retry-after header)' })),
    },
    { $id: 'RateLimitError', title: 'RateLimitError', ...open },
  ),
  /** `{statusCode, error, message}`: raised before the endpoint runs (auth, permission, JSON). */
  framework: Type.Object(
    { statusCode: Type.Integer({ description: 'HTTP status' }), error: text('HTTP reason phrase'), message: text('What went wrong') },
    { $id: 'FrameworkError', title: 'FrameworkError', ...open },
  ),
} satisfies Record<string, TSchema>;

export type ErrorShape = keyof typeof errorComponents;

/** `schema` or null; the description stays on the field, where documentation shows it. */
export const nullable = <T extends TSchema>(schema: T) =>
  Type.Union([schema, Type.Null()], schema.description ? { description: schema.description } : {});

const pageUrl = (which: string) =>
  nullable(Type.String({ description: `The ${which} page's URL (every other query parameter kept), or null` }));
const pageLinks = { next_page_url: pageUrl('next'), previous_page_url: pageUrl('previous') };

/** The `page`/`limit` list envelope (lists.ts pageLimitList) around `item`. */
export function pageLimitListOf(item: TSchema, title: string, extra: Record<string, TSchema> = {}) {
  return Type.Object({ data: Type.Array(item, { description: 'This page of the list' }), ...pageLinks, ...extra }, { title });
}

/** The `per_page` list envelope (lists.ts perPageList) around `item`. */
export function perPageListOf(item: TSchema, title: string, links = true) {
  return Type.Object(
    {
      data: Type.Array(item, { description: 'This page of the list' }),
      total_records: Type.Integer({ description: 'Items matching the filters, on every page' }),
      per_page: Type.Integer({ description: 'Page size' }),
      current_page: Type.Integer({ description: 'This page, from 1' }),
      total_pages: Type.Integer({ description: 'Pages in all' }),
      ...(links ? pageLinks : {}),
    },
    { title },
  );
}

const ref = (shape: ErrorShape) => Type.Ref(errorComponents[shape].$id!);

/** `{ status: shape | [shapes] }` as response schemas referencing the shared components. */
export function errorResponses(statuses: Record<number, ErrorShape | ErrorShape[]>): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const [status, shapes] of Object.entries(statuses)) {
    const list = Array.isArray(shapes) ? shapes : [shapes];
    out[Number(status)] = list.length === 1 ? ref(list[0]) : Type.Union(list.map(ref));
  }
  return out;
}

/**
 * Adds the statuses every route can answer without naming them: 400 for a request its own
 * schemas refuse or invalid JSON (merged with the route's own 400 shapes), 401 and 403 before
 * an authenticated endpoint runs, 414 for an over-long path parameter, 413 and 415 for a body
 * too large or of an unknown type, 431 for a request line and headers over 16 KB, 500. Called
 * for each route from app.ts.
 */
export function withDefaultResponses(
  response: Record<string, TSchema> | undefined,
  isPublic: boolean,
  hasPathParams = false,
  takesBody = false,
): Record<string, TSchema> {
  const out: Record<string, TSchema> = { ...(response ?? {}) };
  // A route that names no 400 shapes of its own may answer any of the spec's 400 bodies.
  const invalid = [ref('validation'), ref('framework')];
  // The serializer takes the first shape a body matches, so the strictest come first.
  const own = out['400'] ?? Type.Union([ref('sendValidation'), ref('fieldValidation'), ref('error')]);
  out['400'] = Type.Union([...invalid, ...(own.anyOf ?? [own])]);
  if (!isPublic) {
    out['401'] ??= ref('framework');
    // Without shapes of its own, a 403 may be a plan gate or a refusal with a message.
    const own403 = out['403'] ?? Type.Union([ref('planRequired'), ref('errorMessage')]);
    out['403'] = Type.Union([ref('framework'), ...(own403.anyOf ?? [own403])]);
  }
  // The router refuses a path parameter longer than its limit before any schema runs.
  if (hasPathParams) out['414'] ??= ref('framework');
  // A body over the route's limit, or of a type no parser reads, is refused before the route runs.
  if (takesBody) {
    out['413'] ??= ref('framework');
    out['415'] ??= ref('framework');
  }
  // Node refuses a request line and headers over its 16 KB limit (a very long query string) before routing.
  out['431'] ??= ref('framework');
  out['500'] ??= ref('framework');
  return out;
}
