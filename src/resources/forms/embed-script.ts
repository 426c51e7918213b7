// The embed script: the browser code in ./embed bundled and minified by esbuild once per
// process (at start, when the routes are registered), so `npm ci && npm start` serves it with
// no build step. Each workspace's script is that bundle called with the workspace's live
// forms (token and type); the definitions themselves are loaded from the public endpoint, so
// a live form's update shows on the next page view.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

let bundle: Promise<string> | null = null;

export function embedBundle(): Promise<string> {
  bundle ??= build({
    entryPoints: [join(import.meta.dirname, 'embed', 'main.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  }).then((result) => result.outputFiles[0].text);
  return bundle;
}

export interface EmbedConfig {
  forms: Array<{ token: string; type: string }>;
}

export interface ServedScript {
  body: string;
  gzipped: Buffer;
  etag: string;
}

/** The script of one workspace: the bundle run with its configuration (read as `__POSTLANE__`). */
export function workspaceScript(code: string, config: EmbedConfig): ServedScript {
  // `<` escaped so no value can close a script element when the code is inlined somewhere.
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  const body = `(function(__POSTLANE__){${code}})(${json});\n`;
  return { body, gzipped: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}
