// What the forms tests share: forms made and published over the API, a proof of work solved
// as the embed script would (altcha-lib's solver, Node's SHA-256), and a web page on its own
// loopback server that embeds a workspace's script.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { ApiClient } from '../helpers/app.ts';

export async function createLiveForm(api: ApiClient, body: Record<string, unknown>) {
  const created = await api.post('/v2/forms', body);
  assert.equal(created.status, 201, created.text);
  const published = await api.post(`/v2/forms/${created.body.id}/publish`);
  assert.equal(published.status, 200, published.text);
  return published.body as { id: string; token: string; type: string; status: string };
}

/** The `proof` of a submission: the challenge of a public load, solved. */
export async function solveProof(challenge: { parameters: Record<string, unknown>; signature?: string }) {
  const solution = await solveChallenge({ challenge: challenge as never, deriveKey });
  assert.ok(solution, 'the challenge was solved');
  return { challenge, solution: { counter: solution.counter, derivedKey: solution.derivedKey } };
}

/** Loads the live form (no key) and submits `fields` with a solved proof. */
export async function submitForm(
  publicApi: ApiClient,
  token: string,
  fields: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  const loaded = await publicApi.get(`/v2/forms/${token}`);
  assert.equal(loaded.status, 200, loaded.text);
  return publicApi.post(`/v2/forms/${token}/submit`, { fields, proof: await solveProof(loaded.body.challenge), ...extra });
}

export interface SitePage {
  url: string;
  close(): Promise<void>;
}

// A 1×1 PNG for image blocks.
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkaPhfDwAEhgGAWz1a2QAAAABJRU5ErkJggg==', 'base64');

/** A site on another origin than Postlane: `.png` paths answer an image, every other path a
 *  page with the embed script and `content` (where embed forms are placed). */
export async function startSite(scriptUrl: string, content = ''): Promise<SitePage> {
  const page = (path: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Example shop</title></head>
<body><header><nav aria-label="Main"><a href="/">Home</a> <a href="/blog/post">Blog</a></nav></header>
<main><h1>Example shop: ${path.replace(/[<>&"]/g, '')}</h1><p>Things for sale.</p><button id="outside" type="button">A button of the page</button>
${content}<div style="height:3000px"></div></main>
<script async src="${scriptUrl}"></script></body></html>`;
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    if (path.endsWith('.png')) {
      response.writeHead(200, { 'content-type': 'image/png' });
      return response.end(PIXEL);
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(page(path));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
