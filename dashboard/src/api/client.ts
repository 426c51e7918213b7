// The dashboard's only door to the server: the same /v2 API every client uses (plus /auth for
// the session), typed from /openapi.json. The session cookie goes along by itself; every
// request that changes something also carries the session's CSRF token.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

type Json<R> = R extends { content: { 'application/json': infer T } } ? T : never;
/** The JSON body a route answers with on success (200 or 201). */
export type Ok<P extends keyof paths, M extends 'get' | 'post' | 'patch' | 'delete'> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer A }
    ? Json<A>
    : R extends { 201: infer B }
      ? Json<B>
      : never
  : never;

let csrfToken = '';
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD') request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(csrf);

/** An error as the API words it, whichever of the spec's error shapes it came in. */
export function errorText(body: unknown, status?: number): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    if (Array.isArray(b.validation_errors)) return `${b.error ?? 'Validation failed'}: ${(b.validation_errors as string[]).join('; ')}`;
    if (b.errors && typeof b.errors === 'object') {
      const lines = Object.entries(b.errors as Record<string, string[]>).map(([field, messages]) => `${field}: ${messages.join(', ')}`);
      return `${b.message ?? 'Validation failed'}: ${lines.join('; ')}`;
    }
    if (Array.isArray(b.details) && b.details.length > 0) {
      const details = (b.details as Array<{ instancePath?: string; message?: string }>).map(
        (d) => `${d.instancePath ? `${d.instancePath} ` : ''}${d.message}`,
      );
      return `${b.message ?? b.error}: ${details.join('; ')}`;
    }
    if (typeof b.message === 'string') return b.message;
    if (typeof b.error === 'string') return b.error;
  }
  if (typeof body === 'string' && body) return body;
  return `The server answered ${status ?? 'with an error'}`;
}

export class ApiFailure extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super(errorText(body, status));
    this.status = status;
    this.body = body;
  }
}

/** The data of an openapi-fetch answer, or an ApiFailure carrying the API's own words. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiFailure(response.status, error);
  return data as T;
}

/**
 * Sends a file (multipart) to a /v2 route with XMLHttpRequest, the one browser API that reports
 * upload progress; `onProgress` gets the share sent (0 to 1). Answers the status and JSON body.
 */
export function upload(url: string, form: FormData, onProgress: (share: number) => void): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    xhr.withCredentials = true;
    xhr.setRequestHeader('x-csrf-token', csrfToken);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.upload.onload = () => onProgress(1);
    xhr.onload = () => {
      let body: unknown = xhr.responseText;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON: the text as it came
      }
      resolve({ status: xhr.status, body });
    };
    xhr.onerror = () => reject(new Error('The upload failed: the server could not be reached'));
    xhr.send(form);
  });
}
