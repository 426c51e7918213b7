// Builds the dashboard into dashboard/dist with esbuild: one minified, fingerprinted bundle of
// script and one of styles, and the index.html that loads them. Code split: what a page loads with
// `import()` (editors, charts, the automation canvas) becomes a chunk of its own, fetched only on the
// pages that use it, so the first load stays small. `npm ci` runs it (prepare);
// `npm run build:dashboard` runs it again after a change. Written to a fresh folder and then
// swapped in, so a server reading dist never sees half a build.
import { build } from 'esbuild';
import { mkdirSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';

const root = import.meta.dirname;
export const DIST = join(root, 'dist');

export async function buildDashboard(options: { quiet?: boolean } = {}): Promise<{ js: string; css: string; bytes: number }> {
  const staging = join(root, `dist-${process.pid}-${Date.now()}`);
  mkdirSync(join(staging, 'assets'), { recursive: true });
  const result = await build({
    entryPoints: { app: join(root, 'src', 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    splitting: true,
    chunkNames: 'chunk-[hash]',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    // React libraries (the automation canvas, @xyflow/react) run on Preact's compatibility layer.
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat', 'react/jsx-runtime': 'preact/compat/jsx-runtime' },
    outdir: join(staging, 'assets'),
    entryNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: options.quiet ? 'error' : 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const entry = outputs.find(([, o]) => o.entryPoint !== undefined && o.entryPoint.endsWith('main.tsx'))!;
  const js = basename(entry[0]);
  const css = basename(entry[1].cssBundle ?? outputs.find(([name]) => name.endsWith('.css'))![0]);
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  writeFileSync(
    join(staging, 'index.html'),
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Postlane</title>
<link rel="icon" href="data:,">
<link rel="preload" href="/auth/session" as="fetch" crossorigin="anonymous">
<link rel="stylesheet" href="/dashboard/assets/${css}">
<script type="module" src="/dashboard/assets/${js}"></script>
</head>
<body><div id="app"></div></body>
</html>
`,
  );
  const old = `${DIST}-old-${process.pid}`;
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(staging, DIST);
  rmSync(old, { recursive: true, force: true });
  return { js, css, bytes };
}

if (import.meta.main) {
  const { js, css, bytes } = await buildDashboard();
  process.stdout.write(`dashboard built: ${js}, ${css} (${(bytes / 1024).toFixed(1)} KiB) in ${DIST}\n`);
}
