// The stateful fuzzer: it makes every kind of resource the API has, keeps the real ids (and the
// public pages' tokens, and the links in the mail the server sends), and sends a mix of valid,
// mutated and hostile requests that use them, over every operation of /openapi.json and the
// public pages, signed with API keys of both scopes and dashboard sessions. It records what no
// request should ever get: a 5xx, a dropped or silent connection, a stack trace or SQL in an
// error, a status the operation does not document; and the server's RSS as it goes.
// Each request is a function of (seed, index) and the pools, so FUZZ_SEED and the index
// printed with a finding give the same request shape again; the request itself is printed too.
// Used by the stateful-fuzz test (a few thousand requests) and `npm run bench fuzz` (100,000).
import http from 'node:http';
import { checkAgainstContract } from './contract.ts';
import { LEAK } from './fuzz.ts';
import { buildWorld, make, recipes, type World } from './stateful-fuzz-world.ts';

export { buildWorld } from './stateful-fuzz-world.ts';
import {
  collectionOf,
  generator,
  kindOfParameter,
  operationsOf,
  type OpenApiDocument,
  type StatefulRequest,
} from './stateful-fuzz-requests.ts';
import type { FuzzTarget } from './stateful-fuzz-target.ts';
import type { KnownFinding } from './stateful-fuzz-known.ts';

export type { StatefulRequest } from './stateful-fuzz-requests.ts';

export type Outcome =
  | { kind: 'answer'; status: number; contentType: string | null; text: string }
  | { kind: 'not sent'; cause: string }
  | { kind: 'no answer'; cause: string };

export interface Finding {
  /** 5xx | no answer | leak | undocumented | contract */
  kind: string;
  /** What groups findings of one cause: method, operation, content type, status. */
  signature: string;
  count: number;
  /** The first request that showed it, and what came back. */
  example: string;
  index: number;
}

export interface RssSample {
  seconds: number;
  requests: number;
  mb: number;
}

export interface FuzzReport {
  seed: number;
  sent: number;
  notSent: number;
  seconds: number;
  operations: number;
  operationsReached: number;
  statuses: Map<number, number>;
  byMode: Map<string, number>;
  findings: Map<string, Finding>;
  rss: RssSample[];
  setupRequests: number;
  /** Requests of known shapes not sent, by the finding's name. */
  withheld: Map<string, number>;
  /** The request after which the server stopped answering anything (health check included), if it did. */
  frozeAfter: string | null;
  pools: Record<string, number>;
  up: boolean;
}

export interface FuzzOptions {
  requests: number;
  concurrency: number;
  seed: number;
  answerTimeoutMs?: number;
  /** How many of each kind to make before the fuzz starts (3). */
  perKind?: number;
  /** A world already built (buildWorld) for this target: the fuzz starts at once. */
  world?: World;
  /** Stop sending after this long (the report says how many were sent). */
  maxSeconds?: number;
  /** Shapes of known findings being fixed elsewhere: withheld, or their findings counted apart. */
  known?: KnownFinding[];
  progress?: (line: string) => void;
}

/** Sends `request` as generated (node:http: the path as is, the headers and body as built). */
export function send(port: number, agent: http.Agent | false, request: StatefulRequest, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let outgoing: http.ClientRequest;
    try {
      const length = request.body === undefined ? {} : { 'content-length': String(request.body.length) };
      outgoing = http.request({
        host: '127.0.0.1',
        port,
        method: request.method,
        path: request.url,
        agent,
        localAddress: request.localAddress,
        headers: { ...request.headers, ...length },
      });
    } catch (error) {
      return resolve({ kind: 'not sent', cause: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
    }
    outgoing.setTimeout(timeoutMs, () =>
      outgoing.destroy(Object.assign(new Error('timeout'), { code: `no answer in ${timeoutMs / 1000} s` })),
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => resolve({ kind: 'no answer', cause: error.code ?? error.message }));
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        // Enough to judge an answer by; exports can be large.
        if (size < 2_000_000) chunks.push(chunk);
        size += chunk.length;
      });
      response.on('error', (error: NodeJS.ErrnoException) =>
        resolve({ kind: 'no answer', cause: `body cut: ${error.code ?? error.message}` }),
      );
      response.on('close', () => resolve({ kind: 'no answer', cause: 'connection closed before the end of the answer' }));
      response.on('end', () =>
        resolve({
          kind: 'answer',
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'] ?? null,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    outgoing.end(request.body);
  });
}

/** One line that says what was sent: enough to send it again by hand. */
export function describe(request: StatefulRequest): string {
  const type = request.headers['content-type'] ?? '(none)';
  const body =
    request.body === undefined
      ? ''
      : ` body[${request.body.length.toLocaleString('en')} B]=${JSON.stringify(request.body.subarray(0, 160).toString('utf8'))}`;
  return `#${request.index} ${request.mode}/${request.auth} ${request.method} ${request.url.slice(0, 160)} content-type=${type}${request.localAddress ? ` from ${request.localAddress}` : ''}${body}`;
}

function contentKind(request: StatefulRequest): string {
  const type = request.headers['content-type'];
  if (!type) return request.body ? 'no type' : 'no body';
  if (type.startsWith('multipart/form-data'))
    return request.body && !request.body.includes(Buffer.from(`--\r\n`)) ? 'multipart (unclosed)' : 'multipart';
  return type.split(';')[0].toLowerCase();
}

async function healthy(target: FuzzTarget): Promise<boolean> {
  const response = await fetch(`${target.url}/healthz`, { signal: AbortSignal.timeout(10_000) }).catch(() => null);
  return response?.status === 200;
}

/** Runs the fuzz against a started target; the report says what it found. */
export async function runStatefulFuzz(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const timeoutMs = options.answerTimeoutMs ?? 30_000;
  const document = (await (await fetch(`${target.url}/openapi.json`)).json()) as OpenApiDocument;
  const world = options.world ?? (await buildWorld(target, options.perKind));
  if (process.env.FUZZ_DEBUG)
    console.log('world built', JSON.stringify(Object.fromEntries(world.live)), JSON.stringify(Object.fromEntries(world.tokens)));
  const generate = generator(options.seed, document, world);
  const operations = operationsOf(document);
  const kinds = new Set(
    operations.flatMap((op) => (op.path.match(/\{[^}]+\}/g) ?? []).map((p) => kindOfParameter(op.path, p.slice(1, -1)))),
  );
  const report: FuzzReport = {
    seed: options.seed,
    sent: 0,
    notSent: 0,
    seconds: 0,
    operations: operations.length,
    operationsReached: 0,
    statuses: new Map(),
    byMode: new Map(),
    findings: new Map(),
    rss: [],
    setupRequests: 0,
    withheld: new Map(),
    frozeAfter: null,
    pools: {},
    up: false,
  };
  const reached = new Set<string>();
  const count = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);
  const find = (kind: string, signature: string, request: StatefulRequest, detail: string) => {
    const key = `${kind}: ${signature}`;
    const known = report.findings.get(key);
    if (known) known.count++;
    else report.findings.set(key, { kind, signature, count: 1, example: `${describe(request)} → ${detail}`, index: request.index });
  };

  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      report.rss.push({ seconds: elapsed(), requests: report.sent, mb: target.rssMb() });
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();

  // Kinds that run low are made again, and mail is read for new links, now and then.
  let maintaining: Promise<void> | null = null;
  let round = 3;
  const maintain = async () => {
    world.harvestMail();
    round++;
    for (const recipe of recipes(world, round)) {
      if (world.count(recipe.kind) < 2) report.setupRequests += await make(world, round, recipe.kind);
    }
    // Fresh mail: a tracked email and a campaign send, so links of every kind keep coming.
    if (round % 4 === 0) {
      report.setupRequests += await make(world, round, 'emails');
      const campaigns = await make(world, round, 'campaigns');
      const campaign = world.live.get('campaigns')?.at(-1);
      const audience = world.live.get('audiences')?.[0];
      if (campaigns && campaign && audience) {
        await fetch(`${target.url}/v2/campaigns/${campaign}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ recipients: [{ audience_id: audience }] }),
        }).catch(() => null);
        await fetch(`${target.url}/v2/campaigns/${campaign}/send`, {
          method: 'POST',
          headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
          body: '{}',
        }).catch(() => null);
        report.setupRequests += 3;
      }
    }
  };

  let next = 0;
  const worker = async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let previous: StatefulRequest | undefined;
    try {
      while (next < options.requests && !report.frozeAfter && elapsed() < (options.maxSeconds ?? Infinity)) {
        const index = next++;
        if (index > 0 && index % 250 === 0 && !maintaining)
          maintaining = maintain()
            .catch(() => {})
            .finally(() => (maintaining = null));
        const request = generate.next(index);
        const withheld = options.known?.find((known) => known.withhold && known.matches(request));
        if (withheld) {
          count(report.withheld, withheld.name);
          continue;
        }
        const sentAt = performance.now();
        // A URL past Node's header limit gets a 431 and the connection closed: on a connection of its own,
        // so the next request is not written onto a socket the server is closing.
        const ownConnection = request.localAddress !== undefined || request.url.length > 8000;
        const outcome = await send(target.port, ownConnection ? false : agent, request, timeoutMs);
        if (process.env.FUZZ_DEBUG)
          console.log(
            `${(performance.now() - sentAt).toFixed(0)} ms ${outcome.kind === 'answer' ? outcome.status : outcome.kind} ${describe(request).slice(0, 300)}`,
          );
        if (outcome.kind === 'not sent') {
          report.notSent++;
          continue;
        }
        report.sent++;
        count(report.byMode, request.mode);
        if (report.sent % 10_000 === 0)
          options.progress?.(
            `… ${report.sent.toLocaleString('en')} sent in ${elapsed().toFixed(0)} s, RSS ${target.rssMb().toFixed(0)} MB`,
          );
        const knownAs = options.known?.find((known) => !known.withhold && known.matches(request, outcome))?.name;
        const kind = (k: string) => (knownAs ? `known (${knownAs}) ${k}` : k);
        if (outcome.kind === 'no answer') {
          find(
            kind('no answer'),
            `${request.method} ${request.operation} ${contentKind(request)}: ${outcome.cause}`,
            request,
            `no answer (${outcome.cause}); before it on that connection: ${previous && !request.localAddress ? describe(previous) : 'nothing'}`,
          );
          if (!target.alive()) break;
          // Silence: is it this request, or has the server stopped answering anything?
          if (/no answer in/.test(outcome.cause) && !(await healthy(target))) {
            report.frozeAfter ??= describe(request);
            break;
          }
          previous = request;
          continue;
        }
        previous = request;
        const { status, text, contentType } = outcome;
        count(report.statuses, status);
        reached.add(`${request.method} ${request.operation}`);
        const excerpt = `${status} ${text.slice(0, 300)}`;
        if (status >= 500) find(kind('5xx'), `${status} ${request.method} ${request.operation} ${contentKind(request)}`, request, excerpt);
        else if (!request.documented.has(status))
          find(kind('undocumented'), `${status} ${request.method} ${request.operation}`, request, excerpt);
        if ((status >= 400 || contentType?.includes('html')) && LEAK.test(text))
          find(kind('leak'), `${request.method} ${request.operation} ${status}`, request, excerpt);
        if (status < 500 && request.mode !== 'public') {
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: checked as text
          }
          try {
            await checkAgainstContract(target.url, request.method, request.operation.replace(/\{[^}]+\}/g, 'x'), status, contentType, body);
          } catch (error) {
            if (request.documented.has(status))
              find('contract', `${status} ${request.method} ${request.operation}`, request, `${(error as Error).message.slice(0, 400)}`);
          }
          if (status < 300 && contentType?.includes('json')) learn(request, body);
        }
      }
    } finally {
      agent.destroy();
    }
  };

  function learn(request: StatefulRequest, body: any): void {
    const collection = collectionOf(request.operation, kinds);
    if (request.method === 'DELETE' && request.operation.endsWith('}')) {
      const id = decodeURIComponent(request.url.split('?')[0].split('/').at(-1) ?? '');
      if (collection) world.remove(collection, id);
      return;
    }
    world.learn(request.operation.endsWith('}') ? null : collection, body);
    if (!body || typeof body !== 'object') return;
    if (typeof body.token === 'string' && /^\/v2\/(audiences|forms)/.test(request.operation))
      world.addToken(request.operation.startsWith('/v2/forms') ? 'forms:token' : 'audiences:token', body.token);
    if (request.operation === '/v2/invitations' && typeof body.url === 'string')
      world.addToken('invitations:token', body.url.slice(body.url.lastIndexOf('#') + 1));
    if (request.operation === '/v2/api-keys' && typeof body.key === 'string') world.extraKeys.push(body.key);
    if (request.operation === '/v2/forms/embed' && typeof body.public_key === 'string') world.addToken('embed', body.public_key);
    if (request.operation === '/auth/invitations/{token}/accept' && typeof body.user?.id === 'string') world.add('members', body.user.id);
  }

  await Promise.all(Array.from({ length: options.concurrency }, worker));
  await maintaining;
  report.seconds = elapsed();
  sampling = false;
  await sampler;
  report.rss.push({ seconds: report.seconds, requests: report.sent, mb: target.rssMb() });
  report.operationsReached = [...reached].filter((key) => operations.some((op) => `${op.method} ${op.path}` === key)).length;
  report.pools = Object.fromEntries(
    [...world.live].map(([kind, ids]) => [kind, ids.length]).concat([...world.tokens].map(([kind, list]) => [kind, list.length])),
  );
  report.up = target.alive() && (await fetch(`${target.url}/healthz`).catch(() => null))?.status === 200;
  return report;
}

/** RSS after warm-up (the first fifth of the run): first and last, the peak, and the growth per 10,000 requests (least squares). */
export function rssSummary(samples: RssSample[]): { warmedMb: number; lastMb: number; peakMb: number; growthPer10k: number } {
  const after = samples.filter((s) => s.requests >= (samples.at(-1)?.requests ?? 0) * 0.2 && s.mb > 0);
  if (after.length < 2) return { warmedMb: after[0]?.mb ?? 0, lastMb: after[0]?.mb ?? 0, peakMb: after[0]?.mb ?? 0, growthPer10k: 0 };
  const n = after.length;
  const mx = after.reduce((a, s) => a + s.requests, 0) / n;
  const my = after.reduce((a, s) => a + s.mb, 0) / n;
  const slope =
    after.reduce((a, s) => a + (s.requests - mx) * (s.mb - my), 0) /
    Math.max(
      1,
      after.reduce((a, s) => a + (s.requests - mx) ** 2, 0),
    );
  return { warmedMb: after[0].mb, lastMb: after.at(-1)!.mb, peakMb: Math.max(...after.map((s) => s.mb)), growthPer10k: slope * 10_000 };
}

/** The report as lines for a person. */
export function reportLines(report: FuzzReport, target: FuzzTarget): string[] {
  const list = (map: Map<string | number, number>) =>
    [...map]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, c]) => `${k}: ${c}`)
      .join(', ') || 'none';
  const total = (kind: string) => [...report.findings.values()].filter((f) => f.kind === kind).reduce((n, f) => n + f.count, 0);
  const rss = rssSummary(report.rss);
  const unhandled = target.child
    .output()
    .split('\n')
    .filter((line) => /unhandled|uncaught/i.test(line)).length;
  const lines = [
    `seed ${report.seed}: ${report.sent.toLocaleString('en')} requests sent in ${report.seconds.toFixed(1)} s (${Math.round(report.sent / report.seconds)} req/s); ${report.notSent} refused by the client itself; ${report.setupRequests} more to make resources again`,
    `operations reached: ${report.operationsReached} of ${report.operations}; by mode: ${list(report.byMode)}`,
    `answers by status: ${list(report.statuses)}`,
    `5xx: ${total('5xx')} (aim 0); no answer (dropped or silent): ${total('no answer')} (aim 0); stack traces or SQL leaked: ${total('leak')} (aim 0)`,
    `undocumented statuses: ${total('undocumented')}; bodies not matching their documented schema: ${total('contract')}; known findings set aside: ${[...report.findings.values()].filter((f) => f.kind.startsWith('known')).reduce((n, f) => n + f.count, 0)}`,
    `server RSS: ${rss.warmedMb.toFixed(0)} MB after warm-up (the first fifth), ${rss.lastMb.toFixed(0)} MB at the end, peak ${rss.peakMb.toFixed(0)} MB; ${report.sent >= 10_000 ? `trend after warm-up ${rss.growthPer10k >= 0 ? '+' : ''}${rss.growthPer10k.toFixed(1)} MB per 10,000 requests (least squares over ${report.rss.length} samples, one a second)` : 'too few requests to judge a trend'}`,
    `server stopped answering (health check included) after: ${report.frozeAfter ?? 'never (aim)'}`,
    `withheld (known findings being fixed elsewhere, see stateful-fuzz-known.ts): ${list(report.withheld)}`,
    `server up afterwards: ${report.up ? 'yes' : 'NO'}; "unhandled"/"uncaught" lines in its log: ${unhandled}`,
    `pools at the end: ${Object.entries(report.pools)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  ];
  const order = ['5xx', 'no answer', 'leak', 'undocumented', 'contract'];
  const findings = [...report.findings.values()].sort(
    (a, b) =>
      order.indexOf(a.kind.replace(/^known \([^)]*\) /, '')) - order.indexOf(b.kind.replace(/^known \([^)]*\) /, '')) || b.count - a.count,
  );
  // Every 5xx, silence and leak with its example; of the undocumented statuses and schema
  // mismatches, a count per status and the most frequent few (they are many, and alike).
  const serious = findings.filter((f) => !/undocumented|contract/.test(f.kind));
  const minor = findings.filter((f) => /undocumented|contract/.test(f.kind));
  for (const finding of serious)
    lines.push(`  [${finding.kind}] ×${finding.count} ${finding.signature}\n      e.g. ${finding.example.slice(0, 900)}`);
  // What the server said of its 5xx: the first few error lines of its log, for the cause.
  const errors = target.child
    .output()
    .split('\n')
    .filter((line) => /"level":50|unhandled error/.test(line));
  for (const line of errors.slice(0, 10)) lines.push(`  [server log] ${serverErrorSummary(line)}`);
  const byStatus = new Map<string, number>();
  for (const finding of minor)
    byStatus.set(
      `${finding.kind} ${finding.signature.split(' ')[0]}`,
      (byStatus.get(`${finding.kind} ${finding.signature.split(' ')[0]}`) ?? 0) + finding.count,
    );
  if (minor.length) lines.push(`  undocumented statuses and schema mismatches by status: ${list(byStatus)} (${minor.length} operations)`);
  for (const finding of minor.slice(0, Number(process.env.FUZZ_SHOW_MINOR ?? 8)))
    lines.push(`  [${finding.kind}] ×${finding.count} ${finding.signature}\n      e.g. ${finding.example.slice(0, 400)}`);
  return lines;
}

/** A server error log line as its message, SQLSTATE, URL and the project's own stack frames. */
function serverErrorSummary(line: string): string {
  try {
    const entry = JSON.parse(line) as { msg?: string; url?: string; err?: { message?: string; code?: string; stack?: string } };
    const frames = (entry.err?.stack ?? '')
      .split('\n')
      .filter((frame) => frame.includes('/src/'))
      .map((frame) =>
        frame
          .trim()
          .replace(/^at /, '')
          .replace(/file:\/\/\S*?\/src\//, 'src/'),
      );
    return [entry.url ?? entry.msg, entry.err?.code, entry.err?.message, ...frames.slice(0, 8)].filter(Boolean).join(' | ');
  } catch {
    return line.slice(0, 1500);
  }
}
