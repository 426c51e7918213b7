// Starts a real Postlane for a test: on a fresh SQLite file, or, when TEST_DATABASE_URL is
// set, in a fresh PostgreSQL schema (dropped afterwards). Requests go over real HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ApiError } from '../../src/platform/http/errors.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';
import { startPostlane, type RunningPostlane } from '../../src/server.ts';
import { createWorkspace, type CreateWorkspaceInput, type Workspace } from '../../src/resources/workspaces/service.ts';
import type { Role } from '../../src/resources/index.ts';
import { pino } from 'pino';
import { checkAgainstContract } from './contract.ts';

export const usingPostgres = Boolean(process.env.TEST_DATABASE_URL);
export const databaseKind = usingPostgres ? 'postgres' : 'sqlite';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface ApiClient {
  request<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  get<T = any>(path: string, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  delete<T = any>(path: string, headers?: Record<string, string>): Promise<ApiResponse<T>>;
}

/** A request client for `baseUrl`, authenticated with `key` (null: no Authorization header). */
export function apiClient(baseUrl: string, key: string | null): ApiClient {
  async function request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const init: RequestInit = { method, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, init);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    await checkAgainstContract(baseUrl, method, path, response.status, response.headers.get('content-type'), parsed);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }
  return {
    request,
    get: (path, headers) => request('GET', path, undefined, headers),
    post: (path, body, headers) => request('POST', path, body, headers),
    patch: (path, body, headers) => request('PATCH', path, body, headers),
    delete: (path, headers) => request('DELETE', path, undefined, headers),
  };
}

/** A fresh database for one test app: a SQLite file or a PostgreSQL schema. */
export async function freshDatabase(): Promise<{ url: string; schema?: string; dataDir: string; drop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'postlane-test-'));
  if (!usingPostgres) {
    return { url: `sqlite:${join(dataDir, 'postlane.db')}`, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const url = process.env.TEST_DATABASE_URL!;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  return {
    url,
    schema,
    dataDir,
    async drop() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A fresh, migrated database handle for tests of platform code (no app). */
export async function freshMigratedDb(): Promise<{ db: Db; close(): Promise<void> }> {
  const database = await freshDatabase();
  const handle = openDatabase(database.url, { schema: database.schema });
  await migrateToLatest(handle.db);
  return {
    db: handle.db,
    async close() {
      await handle.close();
      await database.drop();
    },
  };
}

/** `url` with the PostgreSQL schema in its connection options (unchanged without a schema). */
export function urlWithSchema(url: string, schema: string | undefined): string {
  if (!schema) return url;
  return `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/** DATABASE_URL for another process (CLI, a second server) to use this app's database. */
export async function databaseUrlOf(app: { config: Config; running: RunningPostlane }): Promise<string> {
  if (!usingPostgres) return app.config.databaseUrl;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(app.running.ctx.db);
  return urlWithSchema(app.config.databaseUrl, rows[0].schema);
}

/** The ApiError a promise rejects with (fails the test if it resolves or throws another error). */
export async function apiErrorOf(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${error}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

export interface TestApp {
  url: string;
  running: RunningPostlane;
  config: Config;
  workspace: Workspace;
  /** The workspace's full-scope key. */
  key: string;
  api: ApiClient;
  /** A client with another key (or none). */
  as(key: string | null): ApiClient;
  /** Another workspace on the same server, with its own full key. */
  newWorkspace(input?: Partial<CreateWorkspaceInput>): Promise<{ workspace: Workspace; key: string; api: ApiClient }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Extra environment (config) for the app. */
  env?: Record<string, string>;
  roles?: Role[];
  workspace?: Partial<CreateWorkspaceInput>;
  jobPollMs?: number;
  /** The app's logger (default: pino at LOG_LEVEL, silent in tests); to read what it logs. */
  logger?: import('pino').Logger;
}

export function testConfig(database: { url: string; dataDir: string }, env: Record<string, string> = {}): Config {
  return loadConfig({
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.url,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await freshDatabase();
  const config = testConfig(database, options.env);
  let running: RunningPostlane;
  try {
    running = await startPostlane(config, {
      roles: options.roles ?? ['api', 'worker', 'smtp'],
      schema: database.schema,
      logger: options.logger ?? pino({ level: config.logLevel }),
      jobPollMs: options.jobPollMs ?? 50,
    });
  } catch (error) {
    await database.drop().catch(() => {});
    throw error;
  }
  const url = running.url!;
  const newWorkspace = async (input: Partial<CreateWorkspaceInput> = {}) => {
    const { workspace, apiKey } = await createWorkspace(running.ctx.db, {
      name: `test-${randomBytes(3).toString('hex')}`,
      plan: 'pro',
      credits: 1000,
      verified: true,
      ...input,
    });
    return { workspace, key: apiKey, api: apiClient(url, apiKey) };
  };
  const first = await newWorkspace(options.workspace);
  return {
    url,
    running,
    config,
    workspace: first.workspace,
    key: first.key,
    api: first.api,
    as: (key) => apiClient(url, key),
    newWorkspace,
    async close() {
      await running.close();
      await database.drop();
    },
  };
}

export interface ChildApp {
  url: string;
  process: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs `postlane serve` as a child process (for crash and multi-process tests). */
export async function startChildApp(env: Record<string, string>, args: string[] = ['serve']): Promise<ChildApp> {
  const root = join(import.meta.dirname, '..', '..');
  const child = spawn(process.execPath, [join(root, 'src', 'main.ts'), ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const port = env.HTTP_PORT;
  const url = `http://127.0.0.1:${port}`;
  // Generous: a loaded machine (CI with both cores busy) can take tens of seconds to start one.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postlane exited early (${child.exitCode}):\n${output}`);
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`postlane did not become healthy:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    process: child,
    output: () => output,
    kill: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}

/** Polls `check` until it returns a truthy value or the time runs out (for async outcomes). */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, stepMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export { freePort } from '../../src/dev/ports.ts';
