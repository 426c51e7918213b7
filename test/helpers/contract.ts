// The API contract as a test check: every response a test receives through apiClient is held
// against what the app's own /openapi.json documents for that operation and status, so a
// test run fails on an undocumented status or a body that drifts from its schema.
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Operation {
  pattern: RegExp;
  path: string;
  method: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

interface Contract {
  operations: Operation[];
  ajv: Ajv2020;
  validators: Map<string, ValidateFunction>;
}

const contracts = new Map<string, Promise<Contract | null>>();

async function loadContract(baseUrl: string): Promise<Contract | null> {
  const response = await fetch(`${baseUrl}/openapi.json`).catch(() => null);
  if (!response || response.status !== 200) return null;
  const document = (await response.json()) as { paths: Record<string, Record<string, Operation['responses'] & object>> };
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi.json');
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    // `{id}` matches one URL segment; more specific paths (fewer parameters) are tried first.
    const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);
    for (const [method, operation] of Object.entries(methods)) {
      const responses = (operation as { responses?: Operation['responses'] }).responses ?? {};
      operations.push({ pattern, path, method: method.toUpperCase(), responses });
    }
  }
  const parameters = (path: string) => (path.match(/\{/g) ?? []).length;
  operations.sort((a, b) => parameters(a.path) - parameters(b.path));
  return { operations, ajv, validators: new Map() };
}

function pointer(...parts: string[]): string {
  return parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/** Asserts that `status` and `body` are what /openapi.json documents for `method path`.
 *  Requests to paths the document does not describe (unknown routes, hidden pages) pass. */
export async function checkAgainstContract(
  baseUrl: string,
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: unknown,
): Promise<void> {
  let contract = contracts.get(baseUrl);
  if (!contract) {
    contract = loadContract(baseUrl);
    contracts.set(baseUrl, contract);
  }
  const loaded = await contract;
  if (!loaded) return;
  const path = new URL(url, 'http://x').pathname.replace(/\/+$/, '') || '/';
  const operation = loaded.operations.find((op) => op.method === method && op.pattern.test(path));
  if (!operation) return;
  const key =
    String(status) in operation.responses
      ? String(status)
      : `${String(status)[0]}XX` in operation.responses
        ? `${String(status)[0]}XX`
        : 'default';
  const documented = operation.responses[key];
  assert.ok(
    documented,
    `${method} ${operation.path} answered ${status}, which /openapi.json does not document (documented: ${Object.keys(operation.responses).join(', ')})`,
  );
  const media = Object.keys(documented.content ?? {});
  if (media.length === 0 || !contentType?.includes('json')) return;
  const type = media.includes('application/json') ? 'application/json' : media[0];
  const ref = `openapi.json#/${pointer('paths', operation.path, method.toLowerCase(), 'responses', key, 'content', type, 'schema')}`;
  let validate = loaded.validators.get(ref);
  if (!validate) {
    validate = loaded.ajv.compile({ $ref: ref });
    loaded.validators.set(ref, validate);
  }
  if (!validate(body)) {
    const problems = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || '(body)'} ${e.message}`)
      .join('; ');
    assert.fail(
      `${method} ${operation.path} ${status}: the body does not match its documented schema: ${problems}\nbody: ${JSON.stringify(body).slice(0, 500)}`,
    );
  }
}
