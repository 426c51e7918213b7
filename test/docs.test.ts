// The documentation as a reader meets it: README.md, docs/*.md and CHANGELOG.md.
// - Every relative link resolves to a file, and a `#anchor` to a heading of that file.
// - No internal tracker numbers, no paths outside the repository and no citations of
//   documents a reader cannot open (internal spec documents and notes, their section
//   numbers), in the docs nor in the code, tests, benchmarks and dashboard sources: every
//   citation points at a repository file or a public URL (https://emailit.com/docs/…).
// - The README's first screen runs as written:
//   * `npx postlane demo`: npx runs package.json's `bin` (bin/postlane.js), checked here;
//     the demo itself is exercised end to end by test/smtp/demo.test.ts.
//   * `npm ci && npm start`: `npm start` is `node src/main.ts serve` (checked here), which
//     test/cli.test.ts ("serve: the first start …") runs on an empty database, and which this
//     file runs too, to send the README's first API calls.
//   * `npm ci && npm test`: this very file runs under it.
//   * `npx postlane --help`: run here; every command it lists is documented in
//     docs/operations.md, and every command documented there is one it lists.
//   * the README's `curl` commands: run here against that fresh server, with the key it printed.
// - Every environment variable the server reads is in docs/operations.md's table.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { freshDatabase, freePort, startChildApp, urlWithSchema, type ChildApp } from './helpers/app.ts';

const root = join(import.meta.dirname, '..');
const docFiles = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** The text outside fenced code blocks, with inline code spans blanked (links there are not links). */
function prose(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
}

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
  for (const match of withoutCode.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const text = match[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text only
      .replace(/<[^>]+>/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function linksOf(file: string): Link[] {
  const text = prose(read(file));
  const links: Link[] = [];
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, line: lineOf(m.index), target: m[1] });
  for (const m of text.matchAll(/^[ \t]*\[[^\]]+\]:[ \t]*(\S+)/gm)) links.push({ file, line: lineOf(m.index), target: m[1] });
  return links;
}

/** What is wrong with a relative link, or null when it resolves (external links are not fetched). */
function brokenLink(link: Link): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return null; // https:, mailto:
  const [pathPart, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const targetFile = pathPart === '' ? join(root, link.file) : resolve(dirname(join(root, link.file)), decodeURIComponent(pathPart));
  if (!targetFile.startsWith(root + '/') && targetFile !== root) return `points outside the repository (${pathPart})`;
  if (!existsSync(targetFile)) return `no such file: ${relative(root, targetFile)}`;
  if (anchor === undefined || anchor === '') return null;
  if (!targetFile.endsWith('.md')) return `an anchor into a file that is not Markdown: ${relative(root, targetFile)}`;
  const anchors = anchorsOf(readFileSync(targetFile, 'utf8'));
  return anchors.has(decodeURIComponent(anchor).toLowerCase()) ? null : `no heading for #${anchor} in ${relative(root, targetFile)}`;
}

test('every relative link in the README, docs/ and the changelog resolves (file and heading)', () => {
  const links = docFiles.flatMap(linksOf);
  assert.ok(links.length > 50, `links found: ${links.length}`);
  const broken = links.map((link) => ({ link, problem: brokenLink(link) })).filter((b) => b.problem);
  assert.deepEqual(
    broken.map(({ link, problem }) => `${link.file}:${link.line} (${link.target}): ${problem}`),
    [],
  );
});

test('the link checker itself refuses a missing file, a missing heading and a path outside the repository', () => {
  assert.match(brokenLink({ file: 'README.md', line: 1, target: 'docs/no-such-page.md' }) ?? '', /no such file/);
  assert.match(brokenLink({ file: 'README.md', line: 1, target: 'docs/api.md#no-such-heading' }) ?? '', /no heading/);
  assert.match(brokenLink({ file: 'docs/api.md', line: 1, target: '../../elsewhere/notes.md' }) ?? '', /outside the repository/);
  assert.equal(brokenLink({ file: 'docs/api.md', line: 1, target: 'operations.md#administration-cli' }), null);
  assert.equal(brokenLink({ file: 'README.md', line: 1, target: '#two-commands' }), null);
  assert.equal(brokenLink({ file: 'README.md', line: 1, target: 'https://emailit.com/docs/' }), null);
});

// The patterns are built from pieces so that this file does not match them itself.
const word = (...pieces: string[]) => pieces.join('');
const forbidden: Array<[RegExp, string]> = [
  [new RegExp(String.raw`\b${word('iss', 'ues?')}\s*#?\d+`, 'gi'), 'an internal issue number'],
  [new RegExp(String.raw`(?<![\w/&#:'"-])#\d{1,5}\b(?!\.\d|\w)`, 'g'), 'a bare #number (an internal issue or pull request)'],
  [new RegExp(String.raw`\b${word('sp', 'ec')}\s+00\d\b`, 'gi'), 'a citation of an unpublished spec document'],
  [new RegExp(String.raw`\b${word('adden', 'dum')}\b`, 'gi'), 'a citation of unpublished notes'],
  [
    new RegExp(String.raw`\.\./${word('sha', 'red')}\b|/work/${word('sha', 'red')}\b|\b${word('sha', 'red')}/(?:spec|design)\b`, 'g'),
    'a path outside the repository',
  ],
];

/** A § with a number that no RFC on this line or the one before explains: an unpublished section. */
function unexplainedSections(lines: string[], i: number): string[] {
  if (/\bRFC\s*\d/.test(lines[i]) || (i > 0 && /\bRFC\s*\d/.test(lines[i - 1]))) return [];
  return [...lines[i].matchAll(/\u00a7\s*\d[\d.]*/g)].map((m) => m[0]);
}

/** Source files a reader browses: code, tests, benchmarks and the dashboard (fixtures are data). */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return path === 'test/fixtures' ? [] : sourceFiles(path);
    return /\.(ts|tsx|js|mjs|css|html|md)$/.test(e.name) ? [path] : [];
  });
}

/** The comment on a line of code (tests use order numbers as data; a bare number sign there is fine). */
function commentOf(line: string): string {
  if (/^\s*(\*|\/\*)/.test(line)) return line;
  return /(?<!:)\/\/(.*)$/.exec(line)?.[1] ?? '';
}

function citationProblems(files: string[], code = false): string[] {
  const found: string[] = [];
  for (const file of files) {
    const lines = read(file).split('\n');
    lines.forEach((line, i) => {
      for (const [pattern, what] of forbidden) {
        const text = code && what.startsWith('a bare #') ? commentOf(line) : line;
        for (const m of text.matchAll(pattern)) found.push(`${file}:${i + 1}: ${what}: "${m[0]}"`);
      }
      for (const section of unexplainedSections(lines, i))
        found.push(`${file}:${i + 1}: a section number of an unpublished document: "${section}"`);
    });
  }
  return found;
}

test('no internal issue numbers, unpublished documents or paths outside the repository in the docs', () => {
  assert.deepEqual(citationProblems(docFiles), []);
});

test('nor in the code, tests, benchmarks and dashboard sources', () => {
  const files = ['src', 'test', 'bench', 'dashboard/src'].flatMap(sourceFiles);
  assert.ok(files.length > 300 && files.includes('test/docs.test.ts'), `files checked: ${files.length}`);
  assert.deepEqual(citationProblems(files, true), []);
});

test('the citation check itself finds each kind of internal reference', () => {
  const samples = [
    word('see iss', 'ue 18'),
    word('fixed in #', '43.'),
    word('as sp', 'ec 001 says'),
    word('the adden', 'dum'),
    word('../sha', 'red/x.md'),
    word('sha', 'red/design/operations.md'),
  ];
  for (const sample of samples)
    assert.ok(
      forbidden.some(([pattern]) => new RegExp(pattern.source, pattern.flags).test(sample)),
      sample,
    );
  assert.equal(commentOf("subject: 'Order #2',"), '');
  assert.equal(commentOf(word('run(); // see #', '43')), word(' see #', '43'));
  assert.equal(commentOf("const url = 'https://emailit.com/docs/';"), '');
  assert.deepEqual(unexplainedSections([word('rule \u00a7', '12')], 0), [word('\u00a7', '12')]);
  assert.deepEqual(unexplainedSections(['as RFC 7672', word('\u00a7', '2.2 has it')], 1), []);
  for (const fine of ["color: '#166534'", 'https://emailit.com/docs/limits.md', 'RFC 5321 \u00a74.5.3.1.8', '550 no such user (#5.1.1)']) {
    assert.ok(!forbidden.some(([pattern]) => new RegExp(pattern.source, pattern.flags).test(fine)), fine);
  }
});

test('the README names its commands as package.json defines them', () => {
  const pkg = JSON.parse(read('package.json'));
  const readme = read('README.md');
  for (const command of ['npm ci && npx postlane demo', 'npm ci && npm start', 'npm ci && npm test'])
    assert.ok(readme.includes(command), `README shows ${command}`);
  assert.equal(pkg.bin.postlane, 'bin/postlane.js', 'npx postlane runs bin/postlane.js');
  assert.equal(pkg.scripts.start, 'node src/main.ts serve', 'test/cli.test.ts runs `src/main.ts serve`, which is what npm start runs');
  assert.ok(existsSync(join(root, 'test/smtp/demo.test.ts')), 'the demo is exercised by test/smtp/demo.test.ts');
});

function postlane(...args: string[]) {
  const result = spawnSync(process.execPath, [join(root, 'bin', 'postlane.js'), ...args], { encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `workspace create`, `demo`, … as the usage lists them (first words in lowercase). */
function commandsOfUsage(usage: string): string[] {
  const commands = new Set<string>();
  for (const line of usage.split('\n').slice(1)) {
    if (!/^  \S/.test(line)) continue; // continuation lines (options, descriptions) are indented further
    for (const part of line.split(' | ')) {
      const match = /^\s*([a-z][a-z-]*(?: [a-z][a-z-]*)?)(?=\s|$)/.exec(part);
      if (match) commands.add(match[1]);
    }
  }
  return [...commands];
}

/** The commands of docs/operations.md's CLI table (`postlane workspace create --name …`). */
function commandsOfOperations(markdown: string): string[] {
  const commands = new Set<string>();
  for (const match of markdown.matchAll(/^\| `postlane ([a-z][a-z-]*(?: [a-z][a-z-]*)?)(?=[ `])/gm)) commands.add(match[1]);
  return [...commands];
}

test('npx postlane --help runs, and its commands and docs/operations.md name the same ones', () => {
  const help = postlane('--help');
  assert.equal(help.code, 0, help.stderr);
  // The usage is written to stderr today (src/cli/index.ts); either stream will do.
  const usage = help.stdout || help.stderr;
  assert.match(usage, /^usage: postlane <command>/);
  const listed = commandsOfUsage(usage);
  const documented = commandsOfOperations(read('docs/operations.md'));
  assert.ok(listed.includes('workspace create') && listed.includes('demo'), `parsed from the usage: ${listed.join(', ')}`);
  assert.deepEqual(
    listed.filter((c) => !documented.includes(c)),
    [],
    'commands `postlane --help` lists that docs/operations.md does not document',
  );
  assert.deepEqual(
    documented.filter((c) => !listed.includes(c)),
    [],
    'commands docs/operations.md documents that `postlane --help` does not list',
  );
});

test('every environment variable the server reads is documented in docs/operations.md', () => {
  const operations = read('docs/operations.md');
  const names = new Set<string>();
  for (const m of read('src/config.ts').matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)) names.add(m[1]);
  const sources = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? sources(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
    );
  for (const file of sources('src')) {
    for (const m of read(file).matchAll(/process\.env\.((?:POSTLANE|DELIVERY)_[A-Z0-9_]+)/g)) names.add(m[1]);
  }
  assert.ok(names.has('DATABASE_URL') && names.has('POSTLANE_BUILD_THREADS'), `found: ${[...names].join(', ')}`);
  const missing = [...names].filter((name) => !operations.includes(`\`${name}\``));
  assert.deepEqual(missing, [], 'add these to the Configuration table of docs/operations.md');
});

/** The README's `curl` commands, each as method, path, headers and body. */
function readmeCurls(readme: string): Array<{ method: string; url: string; headers: Record<string, string>; body?: string }> {
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]);
  const commands = blocks.flatMap((block) => block.replace(/\\\n\s*/g, ' ').split('\n')).filter((line) => line.startsWith('curl '));
  return commands.map((command) => {
    const words = [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
    const parsed = { method: 'GET', url: '', headers: {} as Record<string, string>, body: undefined as string | undefined };
    for (let i = 1; i < words.length; i++) {
      if (words[i] === '-X') parsed.method = words[++i];
      else if (words[i] === '-H') {
        const [name, ...value] = words[++i].split(':');
        parsed.headers[name.trim()] = value.join(':').trim();
      } else if (words[i] === '-d') {
        parsed.body = words[++i];
        if (parsed.method === 'GET') parsed.method = 'POST';
      } else parsed.url = words[i];
    }
    return parsed;
  });
}

let server: ChildApp;
let drop: () => Promise<void>;

before(async () => {
  const database = await freshDatabase();
  drop = database.drop;
  server = await startChildApp({
    DATABASE_URL: urlWithSchema(database.url, database.schema),
    DATA_DIR: database.dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(await freePort()),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
  });
});

after(async () => {
  await server?.kill();
  await drop?.();
});

test("the README's first API calls work as written against a fresh `npm start`", async () => {
  const key = /secret_[A-Za-z0-9]{32}/.exec(server.output())?.[0];
  assert.ok(key, `the first start prints a key:\n${server.output()}`);
  const readme = read('README.md');
  assert.match(readme, /Created the "default" workspace\. Its API key \(shown once, keep it safe\):/);
  assert.ok(
    server.output().includes('Created the "default" workspace. Its API key (shown once, keep it safe):'),
    'the README quotes what the first start prints',
  );

  const curls = readmeCurls(readme);
  assert.ok(curls.length >= 2, `curl commands found: ${curls.length}`);
  for (const curl of curls) {
    assert.ok(curl.url.startsWith('http://localhost:3000/'), `the README's calls go to the default port: ${curl.url}`);
    const headers = Object.fromEntries(Object.entries(curl.headers).map(([name, value]) => [name, value.replace('secret_…', key)]));
    const response = await fetch(curl.url.replace('http://localhost:3000', server.url), { method: curl.method, headers, body: curl.body });
    const text = await response.text();
    assert.ok(response.ok, `${curl.method} ${curl.url} answered ${response.status}: ${text}`);
  }
});
