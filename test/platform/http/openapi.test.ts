// /openapi.json as a contract: valid OpenAPI 3.1 by a validator of its own, and every
// operation documents its success body and error shapes with described fields.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let app: TestApp;
let document: any;

before(async () => {
  app = await startTestApp();
  const response = await fetch(`${app.url}/openapi.json`);
  assert.equal(response.status, 200);
  document = await response.json();
});
after(() => app.close());

test('the document is valid OpenAPI 3.1', async () => {
  const validator = new Validator();
  const result = await validator.validate(document);
  assert.deepEqual(result.errors ?? [], [], JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
  assert.equal(result.valid, true);
  assert.equal(validator.version, '3.1');
});

const operations = () =>
  Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
  );

function resolve(schema: any): any {
  if (schema?.$ref) return resolve(document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]);
  return schema;
}

test('every operation documents a success response with a body and the spec error shapes', () => {
  const list = operations();
  assert.ok(list.length >= 50, `${list.length} operations`);
  for (const { name, operation } of list) {
    const statuses = Object.keys(operation.responses ?? {});
    const success = statuses.filter((s) => s.startsWith('2') || s.startsWith('3'));
    assert.ok(success.length > 0, `${name} documents no success response`);
    for (const status of ['400', '500']) assert.ok(statuses.includes(status), `${name} lacks ${status}`);
    for (const status of statuses) {
      const content = operation.responses[status].content;
      // MCP answers a notification with 202 and no body (Streamable HTTP transport).
      if (status.startsWith('3') || status === '204' || (name === 'POST /mcp' && status === '202')) continue;
      assert.ok(content && Object.keys(content).length > 0, `${name} ${status} has no body schema`);
    }
  }
});

test('every field of every documented body has a description or a named shape', () => {
  const missing = new Set<string>();
  const seen = new Set<any>();
  const walk = (schema: any, where: string) => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    if (schema.$ref) return walk(resolve(schema), where);
    for (const key of ['anyOf', 'oneOf', 'allOf']) for (const [i, part] of (schema[key] ?? []).entries()) walk(part, `${where}[${i}]`);
    if (schema.items) walk(schema.items, `${where}[]`);
    for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
      const target = property.$ref ? resolve(property) : property;
      if (!property.description && !target?.description && !target?.title) missing.add(`${where}.${name}`);
      walk(property, `${where}.${name}`);
    }
    if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${where}{}`);
  };
  for (const { name, operation } of operations()) {
    for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
      for (const media of Object.values<any>(response.content ?? {})) walk(media.schema, `${name} ${status}`);
    }
  }
  assert.deepEqual([...missing].slice(0, 40), [], `${missing.size} fields without a description`);
});
