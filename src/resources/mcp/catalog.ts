// The MCP tool catalog, generated from the OpenAPI document the app builds from its route
// schemas: one tool per /v2 operation. Input schema from the operation's path and query
// parameters and JSON body; output schema from its success response; annotations from its
// method; toolset from its path; the scope it needs from the route (x-scope). Names follow the
// hosted server's (https://emailit.com/docs/mcp/tools/): verb-noun in kebab case.

export type JsonSchema = Record<string, unknown>;

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface OperationTool {
  name: string;
  description: string;
  toolset: string;
  scope: 'full' | 'sending' | 'events';
  adminOnly: boolean;
  method: string;
  /** OpenAPI path, e.g. /v2/emails/{id}. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** Body fields taken from the arguments (the rest of the arguments); `wrapped`: the body is the `body` argument. */
  body: 'none' | 'fields' | 'wrapped';
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
}

/** The toolsets of https://emailit.com/docs/mcp/toolsets/, by an operation's first path segment. */
const TOOLSET_BY_SEGMENT: Record<string, string> = {
  emails: 'emails',
  domains: 'domains',
  dmarc: 'dmarc',
  'dmarc-reports': 'dmarc',
  templates: 'templates',
  mjml: 'templates',
  'api-keys': 'api_keys',
  audiences: 'audiences',
  subscribers: 'audiences',
  contacts: 'contacts',
  'custom-fields': 'contacts',
  suppressions: 'suppressions',
  webhooks: 'webhooks',
  campaigns: 'campaigns',
  automations: 'automations',
  forms: 'forms',
  'email-verifications': 'verification',
  'email-verification-lists': 'verification',
  events: 'events',
  members: 'workspace',
  invitations: 'workspace',
  workspace: 'workspace',
  stats: 'workspace',
  overview: 'workspace',
  delivery: 'emails',
  email: 'emails',
  system: 'workspace',
};

export const TOOLSETS = [
  'emails',
  'domains',
  'dmarc',
  'templates',
  'api_keys',
  'audiences',
  'contacts',
  'suppressions',
  'webhooks',
  'campaigns',
  'automations',
  'forms',
  'verification',
  'events',
  'workspace',
] as const;

/** Names the docs give operations whose derived name would read worse. */
const NAMES: Record<string, string> = {
  'POST /v2/emails': 'send-email',
  'GET /v2/email/{id}': 'get-email-legacy',
  'GET /v2/contacts/export': 'export-contacts',
  'POST /v2/contacts/import': 'import-contacts',
  'GET /v2/forms/embed': 'get-form-embed-script',
  'POST /v2/forms/{id}/update': 'update-form-legacy',
  'POST /v2/mjml/validate': 'validate-mjml',
  'POST /v2/mjml/render': 'render-mjml',
  'GET /v2/mjml/reference': 'get-mjml-reference',
  'GET /v2/stats/emails': 'get-email-stats',
  'GET /v2/workspace': 'get-workspace',
  'POST /v2/delivery/purge': 'purge-delivery-queue',
  'POST /v2/audiences/{id}/subscribers/bulk': 'add-audience-subscribers-bulk',
  'POST /v2/audiences/{id}/subscribers/bulk-remove': 'remove-audience-subscribers-bulk',
  'POST /v2/domains/{id}/dmarc/reports': 'upload-dmarc-report',
  'GET /v2/system/health': 'get-system-health',
  'GET /v2/automations/catalog': 'get-automation-catalog',
  'POST /v2/automations/validate': 'validate-automation',
};

// Last segments that name a thing of one item rather than a collection of them.
const NOT_COLLECTIONS = new Set(['stats', 'status', 'raw', 'body', 'meta', 'export', 'results']);

function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (/(ss|x|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

const isParam = (segment: string) => segment.startsWith('{');

/** verb-noun from the method and path: list-emails, get-email, cancel-email, list-audience-subscribers. */
export function toolName(method: string, path: string): string {
  const fixed = NAMES[`${method} ${path}`];
  if (fixed) return fixed;
  const segments = path.split('/').slice(2).filter(Boolean); // without '' and 'v2'
  const nouns = segments.filter((s) => !isParam(s));
  const last = segments[segments.length - 1];
  const owner = nouns.slice(0, -1).map(singular); // the resources this one is nested in
  const noun = nouns[nouns.length - 1];
  if (isParam(last)) {
    const verb = { GET: 'get', DELETE: 'delete', POST: 'update', PATCH: 'update', PUT: 'replace' }[method] ?? method.toLowerCase();
    return [verb, ...owner, singular(noun)].join('-');
  }
  const previous = segments[segments.length - 2];
  if (previous && isParam(previous) && nouns.length >= 2) {
    // An action on one item (POST /emails/{id}/cancel) or a thing belonging to it (GET /emails/{id}/raw).
    const item = singular(nouns[nouns.length - 2]);
    const outer = nouns.slice(0, -2).map(singular);
    // A collection inside an item: GET /audiences/{id}/subscribers, POST /audiences/{id}/subscribers.
    if (/[^s]s$/.test(noun) && !NOT_COLLECTIONS.has(noun)) {
      if (method === 'GET') return ['list', ...outer, item, noun].join('-');
      if (method === 'POST') return ['add', ...outer, item, singular(noun)].join('-');
    }
    if (method === 'POST') return [noun, ...outer, item].join('-');
    const verb = { GET: 'get', DELETE: 'delete', PATCH: 'update', PUT: 'replace' }[method] ?? method.toLowerCase();
    return [verb, ...outer, item, noun].join('-');
  }
  if (method === 'GET') return ['list', ...owner, noun].join('-');
  if (method === 'POST') return ['create', ...owner, singular(noun)].join('-');
  if (method === 'DELETE') return ['delete', ...owner, noun].join('-');
  return [method.toLowerCase(), ...owner, noun].join('-');
}

/** MCP annotations from the HTTP method (and whether the operation reaches outside: mail or a URL). */
export function annotationsFor(method: string, path: string, title: string): ToolAnnotations {
  const readOnly = method === 'GET' || method === 'HEAD';
  const outward = !readOnly && /\/(emails|forward|retry|test|send|verify)(\/|$)|\/emails$/.test(path);
  return {
    title,
    readOnlyHint: readOnly,
    destructiveHint: method === 'DELETE',
    idempotentHint: readOnly || method === 'DELETE' || method === 'PUT',
    openWorldHint: outward,
  };
}

// ---------------------------------------------------------------------------------------

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

interface OpenApiOperation {
  summary?: string;
  description?: string;
  parameters?: Array<{ in: string; name: string; required?: boolean; schema?: JsonSchema; description?: string }>;
  requestBody?: { content?: Record<string, { schema?: JsonSchema }>; required?: boolean };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: JsonSchema }> }>;
  'x-scope'?: string;
  'x-role'?: string;
}

/** The schema with every `$ref` to a component inlined (recursion cut off). */
function inline(schema: unknown, components: Record<string, JsonSchema>, depth = 0): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inline(item, components, depth));
  if (!schema || typeof schema !== 'object') return schema;
  const object = schema as JsonSchema;
  if (typeof object.$ref === 'string') {
    const name = object.$ref.replace('#/components/schemas/', '');
    if (depth > 20 || !components[name]) return {};
    return inline(components[name], components, depth + 1);
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(object)) {
    if (key === '$id' || key === '$schema' || key.startsWith('x-')) continue;
    out[key] = inline(value, components, depth);
  }
  return out;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every /v2 operation of the OpenAPI document as a tool. */
export function buildCatalog(document: OpenApiDocument): OperationTool[] {
  const components = document.components?.schemas ?? {};
  const tools: OperationTool[] = [];
  const names = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/v2/')) continue;
    for (const lower of METHODS) {
      const operation = item[lower];
      if (!operation) continue;
      const method = lower.toUpperCase();
      const properties: Record<string, unknown> = {};
      const required: string[] = [];
      const pathParams: string[] = [];
      const queryParams: string[] = [];
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path' && parameter.in !== 'query') continue;
        const schema = inline(parameter.schema ?? {}, components) as JsonSchema;
        properties[parameter.name] =
          parameter.description && !schema.description ? { ...schema, description: parameter.description } : schema;
        if (parameter.required || parameter.in === 'path') required.push(parameter.name);
        (parameter.in === 'path' ? pathParams : queryParams).push(parameter.name);
      }
      let body: OperationTool['body'] = 'none';
      const json =
        operation.requestBody?.content?.['application/json']?.schema ?? Object.values(operation.requestBody?.content ?? {})[0]?.schema;
      if (json) {
        const schema = inline(json, components) as JsonSchema;
        const fields =
          schema.type === 'object' && schema.properties && typeof schema.properties === 'object'
            ? (schema.properties as Record<string, unknown>)
            : null;
        if (fields && !Object.keys(fields).some((field) => field in properties)) {
          body = 'fields';
          Object.assign(properties, fields);
          for (const field of (schema.required as string[] | undefined) ?? []) required.push(field);
        } else {
          body = 'wrapped';
          properties.body = schema;
          if (operation.requestBody?.required) required.push('body');
        }
      }
      const success = Object.entries(operation.responses ?? {}).find(([status]) => status.startsWith('2'));
      const successSchema = success?.[1].content?.['application/json']?.schema;
      const output = successSchema ? (inline(successSchema, components) as JsonSchema) : undefined;
      const summary = operation.summary ?? `${method} ${path}`;
      let name = toolName(method, path);
      if (names.has(name))
        name = `${name}-${path
          .split('/')
          .filter((s) => s && !isParam(s))
          .slice(1)
          .join('-')}`;
      names.set(name, path);
      const segment = path.split('/')[2];
      tools.push({
        name,
        description: [summary.endsWith('.') ? summary : `${summary}.`, operation.description ?? '', `(${method} ${path})`]
          .filter(Boolean)
          .join(' '),
        toolset: path.includes('/dmarc') ? 'dmarc' : (TOOLSET_BY_SEGMENT[segment] ?? segment.replaceAll('-', '_')),
        scope: operation['x-scope'] === 'sending' || operation['x-scope'] === 'events' ? operation['x-scope'] : 'full',
        adminOnly: operation['x-role'] === 'admin',
        method,
        path,
        pathParams,
        queryParams,
        body,
        inputSchema: { type: 'object', properties, ...(required.length ? { required: [...new Set(required)] } : {}) },
        // MCP wants an object at the top of an output schema; other answers come back as text only.
        outputSchema: output && output.type === 'object' ? output : undefined,
        annotations: annotationsFor(method, path, summary),
      });
    }
  }
  return tools;
}
