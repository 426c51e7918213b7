// The Fastify application: JSON parsing, validation, error shapes, authentication, the
// OpenAPI document, health, and every resource's routes under /v2 (and /v1 where legacy).
import Fastify, { LogController, type FastifyInstance, type FastifyError, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormatsModule from 'ajv-formats';
import secureJson from 'secure-json-parse';
import type { AppContext } from '../context.ts';
import { bearerSecret, type Principal, type Scope } from './auth.ts';
import { ApiError, forbiddenScope, frameworkError, invalidJson, reasonPhrase, standardValidationError, unauthorized } from './errors.ts';
import { clientErrorOf, unsupportedContentType } from './client-errors.ts';
import type { Resource } from '../resource.ts';
import { errorComponents, withDefaultResponses } from './responses.ts';
import { registerProbes } from './probes.ts';
import { registerMetrics } from './metrics-route.ts';
import { registerTracing } from './tracing-hooks.ts';
import { AdminRoleRequiredError, withRoleCheck, withRoleResponses, type RequiredRole } from './roles.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** `sending` (or `events`) opens a route to sending (or Events Only) keys too; `public` needs no key. Default: `full`.
     *  A function decides per request (a path that serves both the API and the public). */
    scope?: Scope | 'public' | ((request: FastifyRequest) => Scope | 'public');
    /** `admin`: only a principal acting as an admin of the workspace (roles.ts); others get 403. */
    role?: RequiredRole;
  }
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Bodies are validated strictly (a number is not silently a string); query strings and
// path parameters are text on the wire, so they are coerced.
function makeAjv(options: AjvOptions): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, removeAdditional: false, ...options });
  addFormats(ajv);
  return ajv;
}

// Fastify's own response serializers (fast-json-stringify), each compiled on its first use
// instead of at start: compiling all of them (every route, HEAD twin and status, default error
// responses included) took about 20 MB of heap that stayed for routes an instance never
// answers. Output is the same; a route pays a few milliseconds once per status.
const buildSerializers = SerializerSelector();
function lazySerializers(...args: Parameters<typeof buildSerializers>): ReturnType<typeof buildSerializers> {
  const compile = buildSerializers(...args);
  return (route) => {
    let serialize: ((doc: unknown) => string) | null = null;
    return (doc) => (serialize ??= compile(route))(doc);
  };
}

export const BODY_LIMIT = 50 * 1024 * 1024;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

const nulRefused = () => frameworkError(400, 'Text may not contain NUL (\\u0000) characters');

function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 1000 || value === null || typeof value !== 'object') return false;
  for (const [key, item] of Object.entries(value)) if (key.includes('\u0000') || containsNul(item, depth + 1)) return true;
  return false;
}

/** `resources` are the features found at start (src/resources/index.ts), passed in so that the
 *  platform imports no feature. */
export async function buildApp(ctx: AppContext, resources: readonly Resource[]): Promise<FastifyInstance> {
  // Fastify's own per-request logging (a line per request and response) is for debug and
  // trace only. At other levels Fastify runs without a logger: then it creates no logger per
  // request and hangs no response listeners on each reply (together a measurable share of a
  // small request's cost); our own lines (the error handler's) go to ctx.log.
  const requestLogging = ctx.config.logLevel === 'debug' || ctx.config.logLevel === 'trace';
  const app = Fastify({
    ...(requestLogging
      ? {
          loggerInstance: ctx.log,
          logController: new LogController({ disableRequestLogging: false }),
          // One logger for every request instead of a child per request; the few
          // request-scoped lines name the request id themselves.
          childLoggerFactory: (logger) => logger,
        }
      : { logger: false }),
    bodyLimit: BODY_LIMIT,
    trustProxy: false,
    routerOptions: { ignoreTrailingSlash: true },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
  });

  registerTracing(app as unknown as FastifyInstance);

  const bodyAjv = makeAjv({ coerceTypes: false });
  const textAjv = makeAjv({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));

  // Empty bodies are allowed (e.g. POST …/regenerate with a JSON content type);
  // anything else must parse, or it is the spec's `Invalid JSON in request body`.
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json/, { parseAs: 'buffer' }, (request, body, done) => {
    // JSON is UTF-8 (RFC 8259): a body declared in another charset is refused, and bytes that
    // are not UTF-8 are invalid JSON, not text with replacement characters in it.
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset))
      return done(unsupportedContentType(request.headers['content-type']) as unknown as FastifyError, undefined);
    let text: string;
    let parsed: unknown;
    try {
      text = UTF8.decode(body as Buffer);
      if (text.trim() === '') return done(null, undefined);
      parsed = secureJson.parse(text, null, { protoAction: 'remove', constructorAction: 'remove' });
    } catch {
      return done(invalidJson() as unknown as FastifyError, undefined);
    }
    if (text.includes('\\u0000') && containsNul(parsed)) return done(nulRefused() as unknown as FastifyError, undefined);
    done(null, parsed);
  });
  // NUL is no character of any field (and PostgreSQL cannot store it in text): refused in the
  // path and query string here, in JSON bodies by the parser above. And every answer's
  // Content-Type is the truth: no browser guesses HTML or script in a JSON body, a CSV or a 404.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    const url = request.url;
    if (url.includes('%00') || url.includes('\u0000')) return done(nulRefused() as unknown as FastifyError);
    done();
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      return reply.code(error.status).headers(error.headers).send(error.body);
    }
    if (error.validation) {
      const details = error.validation.map(({ instancePath, schemaPath, keyword, params, message }) => ({
        instancePath,
        schemaPath,
        keyword,
        params: params as Record<string, unknown>,
        message: message ?? '',
      }));
      const body = standardValidationError(error.message, details);
      return reply.code(400).send(body.body);
    }
    const refused = clientErrorOf(error, request);
    if (refused) return reply.code(refused.status).headers(refused.headers).send(refused.body);
    ctx.log.error({ err: error, reqId: request.id, url: request.url }, 'unhandled error');
    return reply.code(500).send({ statusCode: 500, error: reasonPhrase(500), message: 'Internal server error' });
  });

  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send({ statusCode: 404, error: 'Not Found', message: `Route ${request.method} ${request.url.split('?')[0]} not found` });
  });

  for (const schema of [...Object.values(errorComponents), AdminRoleRequiredError]) app.addSchema(schema);
  // Every route documents the statuses it can answer before its handler runs (responses.ts).
  // A route's required role is checked after its credential (roles.ts), and documented.
  app.addHook('onRoute', (route) => {
    const config = route.config as { scope?: string; role?: RequiredRole } | undefined;
    if (config?.role) route.onRequest = withRoleCheck(route.onRequest, config.role);
    if (route.schema?.hide) return;
    const isPublic = config?.scope === 'public';
    // The scope and role a route needs, in the OpenAPI document (the MCP server lists tools by them).
    const api = route.url.startsWith('/v2/') || route.url.startsWith('/v1/');
    const xScope = isPublic || !api ? undefined : typeof config?.scope === 'string' ? config.scope : 'full';
    const extensions = { ...(xScope ? { 'x-scope': xScope } : {}), ...(api && config?.role ? { 'x-role': config.role } : {}) };
    const takesBody = [route.method].flat().some((method) => method !== 'GET' && method !== 'HEAD');
    const response = withDefaultResponses(route.schema?.response as never, isPublic, route.url.includes(':'), takesBody);
    route.schema = { ...(route.schema ?? {}), ...extensions, response: withRoleResponses(response, config?.role) } as typeof route.schema;
  });

  await app.register(swagger, {
    // Shared schemas appear under components/schemas by their $id (Error, ValidationError, …).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Postlane API', version: '2.0.0', description: 'Email Delivery Service API (Emailit-compatible)' },
      servers: [{ url: ctx.config.publicUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key (secret_…)' } } },
      security: [{ bearer: [] }],
    },
  });

  registerProbes(app as unknown as FastifyInstance, ctx);
  registerMetrics(app as unknown as FastifyInstance, ctx);
  app.get('/openapi.json', { schema: { hide: true }, config: { scope: 'public' } }, async () => app.swagger());

  // The key check, made for each route once its scope is known (see authenticateRoutes): a
  // plugin-wide hook would read request.routeOptions, which Fastify builds afresh per access.
  // A 401 names where to find how to get a token (RFC 9728 §5.1).
  const challenge = {
    'www-authenticate': `Bearer resource_metadata="${ctx.config.publicUrl.replace(/\/+$/, '')}/.well-known/oauth-protected-resource"`,
  };
  const authenticateFor = (configured: Scope | 'public' | ((request: FastifyRequest) => Scope | 'public') | undefined) => {
    if (configured === 'public') return null;
    // Callback style: a key seen within the last second is answered without a promise.
    return (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
      let required: Scope = 'full';
      const admit = (principal: Principal | null | undefined) => {
        if (!principal) return done(unauthorized(challenge));
        // A full key opens every route; a sending or Events Only key only the routes of its scope.
        if (principal.scope !== 'full' && principal.scope !== required) return done(forbiddenScope(required));
        request.principal = principal;
        done();
      };
      let pending: Promise<Principal | null>;
      try {
        const wanted = (typeof configured === 'function' ? configured(request) : configured) ?? 'full';
        if (wanted === 'public') return done();
        required = wanted;
        const header = request.headers.authorization;
        // A dashboard session cookie counts only when no Authorization header is sent.
        if (header === undefined && request.headers.cookie !== undefined && ctx.auth.cookieAuthenticator) {
          pending = ctx.auth.cookieAuthenticator(request);
        } else {
          const secret = bearerSecret(header);
          const cached = ctx.auth.cachedPrincipal(secret);
          if (cached) return admit(cached);
          pending = ctx.auth.authenticateBearer(secret);
        }
      } catch (error) {
        return done(error as Error);
      }
      pending.then(admit, done);
    };
  };

  // Every route of the plugin (HEAD routes included) gets the check as its first own onRequest hook.
  const authenticateRoutes = (scoped: FastifyInstance) =>
    scoped.addHook('onRoute', (route) => {
      const check = authenticateFor((route.config as { scope?: Parameters<typeof authenticateFor>[0] } | undefined)?.scope);
      if (!check) return;
      const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
      route.onRequest = [check as never, ...own];
    });

  for (const resource of resources) {
    if (resource.v2) {
      await app.register(
        async (scoped) => {
          authenticateRoutes(scoped as unknown as FastifyInstance);
          await resource.v2!(scoped, ctx);
        },
        { prefix: '/v2' },
      );
    }
    if (resource.v1) {
      await app.register(
        async (scoped) => {
          authenticateRoutes(scoped as unknown as FastifyInstance);
          await resource.v1!(scoped, ctx);
        },
        { prefix: '/v1' },
      );
    }
    if (resource.public) await app.register(async (scoped) => resource.public!(scoped, ctx));
  }
  return app as unknown as FastifyInstance;
}
