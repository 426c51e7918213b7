// The MJML tools (https://emailit.com/docs/templates/mjml.md) and what templates need from them:
// access (the workspace's `mjml` feature), the 2 MB source limit, the render limit, validation and
// compilation. Checking and compiling run in worker threads (pool.ts).
import type { Executor } from '../../platform/db/database.ts';
import { ApiError, fieldValidationError, messageError } from '../../platform/http/errors.ts';
import { SlidingWindowLimiter } from '../../platform/http/rate-limit.ts';
import { getWorkspace, hasFeature } from '../workspaces/service.ts';
import { DOCUMENT_SCHEMA_VERSION, MJML_VERSION } from './versions.ts';
import { processMjml } from './pool.ts';
import type { Diagnostic, SourceFormat } from './types.ts';

export { MJML_VERSION } from './versions.ts';

/** The reference reads mjml's component registry: the compiler loads on the first call only. */
export async function mjmlReference() {
  return (await import('./reference.ts')).mjmlReference();
}
export type { Diagnostic } from './types.ts';

export const MAX_SOURCE_BYTES = 2 * 1024 * 1024;
export const RENDERS_PER_MINUTE = 120;

/** Per workspace, in this process (spec: a fixed per-endpoint limit). */
const renderLimiter = new SlidingWindowLimiter(RENDERS_PER_MINUTE, 60_000);

export const mjmlAlphaError = () =>
  messageError(403, 'mjml_alpha', 'MJML is in alpha and is not enabled for this workspace; ask the operator for the mjml feature.');

export async function hasMjmlAccess(db: Executor, workspaceId: string): Promise<boolean> {
  const workspace = await getWorkspace(db, workspaceId);
  return workspace !== null && hasFeature(workspace, 'mjml');
}

export async function requireMjmlAccess(db: Executor, workspaceId: string): Promise<void> {
  if (!(await hasMjmlAccess(db, workspaceId))) throw mjmlAlphaError();
}

export function checkRenderLimit(workspaceId: string): void {
  const decision = renderLimiter.hit(workspaceId);
  if (decision.allowed) return;
  throw new ApiError(
    429,
    {
      error: 'Rate limit exceeded',
      message: `At most ${RENDERS_PER_MINUTE} MJML renders per minute; retry in ${decision.retryAfter} seconds.`,
      limit: decision.limit,
      current: decision.limit,
      retry_after: decision.retryAfter,
    },
    {
      'retry-after': String(decision.retryAfter),
      'ratelimit-limit': String(decision.limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(decision.retryAfter),
    },
  );
}

/**
 * A source as text (an object as its JSON; the checker reads JSON text as JSON), or the
 * reason it cannot be checked at all: missing, blank, not a string or object, too big.
 */
export function sourceAsText(source: unknown): { text: string } | { problem: string } {
  if (source === undefined || source === null || (typeof source === 'string' && source.trim() === ''))
    return { problem: 'The source field is required.' };
  if (typeof source !== 'string' && (typeof source !== 'object' || Array.isArray(source)))
    return { problem: 'The source must be a string or an object.' };
  let text: string;
  try {
    text = typeof source === 'string' ? source : JSON.stringify(source);
  } catch {
    return { problem: 'The source is nested too deeply.' }; // JSON.stringify overflows the stack
  }
  if (Buffer.byteLength(text, 'utf8') > MAX_SOURCE_BYTES) return { problem: 'The source may not be greater than 2 MB.' };
  return { text };
}

function requireSource(source: unknown): string {
  const checked = sourceAsText(source);
  if ('problem' in checked) throw fieldValidationError({ source: [checked.problem] }, 422);
  return checked.text;
}

export async function validateSource(source: unknown) {
  const result = await processMjml({ source: requireSource(source), compile: false });
  return { valid: result.valid, mjml_version: MJML_VERSION, format: result.format, diagnostics: result.diagnostics };
}

export async function renderSource(source: unknown, variables: Record<string, unknown> | undefined) {
  const result = await processMjml({ source: requireSource(source), compile: true, variables });
  const html = result.valid ? result.html : null;
  return {
    valid: result.valid,
    mjml_version: MJML_VERSION,
    html,
    html_bytes: html === null ? 0 : Buffer.byteLength(html, 'utf8'),
    diagnostics: result.diagnostics,
    ...(variables !== undefined ? { rendered_html: html === null ? null : result.rendered_html } : {}),
  };
}

/** What an MJML template stores about its document (the template's `mjml` object). */
export interface MjmlDocumentInfo {
  document_schema_version: number;
  mjml_version: string;
  format: SourceFormat | null;
  compiled_at: string;
  warnings: number;
}

/** Compiles a template's source: its HTML, or 422 with `errors.source` and `diagnostics`. */
export async function compileTemplateSource(
  source: unknown,
  compiledAt: string,
): Promise<{ html: string; mjml: MjmlDocumentInfo; diagnostics: Diagnostic[] }> {
  const checked = sourceAsText(source);
  if ('problem' in checked) throw fieldValidationError({ source: [checked.problem] }, 422, { diagnostics: [] });
  const result = await processMjml({ source: checked.text, compile: true });
  if (!result.valid || result.html === null) {
    const errors = result.diagnostics.filter((d) => d.severity === 'error');
    const messages = errors.slice(0, 10).map((d) => (d.line ? `Line ${d.line}, column ${d.column}: ${d.message}` : d.message));
    throw fieldValidationError({ source: messages.length ? messages : ['The source is not a valid MJML document.'] }, 422, {
      diagnostics: result.diagnostics,
    });
  }
  return {
    html: result.html,
    diagnostics: result.diagnostics,
    mjml: {
      document_schema_version: DOCUMENT_SCHEMA_VERSION,
      mjml_version: MJML_VERSION,
      format: result.format,
      compiled_at: compiledAt,
      warnings: result.diagnostics.filter((d) => d.severity === 'warning').length,
    },
  };
}
