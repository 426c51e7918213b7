// One uploaded file from a multipart/form-data body (read with @fastify/multipart, which the
// route's plugin registers), with every way such a body can be broken answered as a 4xx with a
// message that says what is wrong: no boundary, a body that ends before its closing boundary,
// a part without a name, two files, an empty file. A stream error never reaches a reader that
// is not listening (an unhandled 'error' event ends the process).
import type { FastifyRequest } from 'fastify';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import { ApiError, frameworkError, plainError } from './errors.ts';

// RFC 2046 5.1.1: 1 to 70 characters, quoted or a token.
const BOUNDARY = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;

/** What is wrong with a multipart/form-data content type, or null when its boundary is usable. */
export function boundaryProblem(contentType: string | undefined): string | null {
  const match = BOUNDARY.exec(contentType ?? '');
  const boundary = match ? (match[1] ?? match[2]) : '';
  if (boundary === '')
    return 'A multipart/form-data body needs a boundary parameter in its Content-Type (multipart/form-data; boundary=...)';
  if (boundary.length > 70) return 'The multipart boundary is longer than 70 characters';
  return null;
}

const MAX_FILENAME = 1000;
const ENDS_EARLY = 'The multipart body ends before its closing boundary: the upload is incomplete';

/** The 4xx for an error of the multipart parser (busboy) or plugin, or null for any other error. */
export function multipartError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  switch (code) {
    case 'FST_MP_PREMATURE_CLOSE':
      return plainError(400, ENDS_EARLY);
    case 'FST_FILES_LIMIT':
      return plainError(400, 'Send one file per request: the multipart body has more than one file part');
    case 'FST_FIELDS_LIMIT':
      return plainError(400, 'The multipart body has too many fields');
    case 'FST_PARTS_LIMIT':
      return plainError(400, 'The multipart body has too many parts');
    case 'FST_PROTO_VIOLATION':
      return plainError(400, 'A multipart part may not be named __proto__, constructor or another built-in property name');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return plainError(400, 'A multipart field declared as application/json is not valid JSON');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return frameworkError(415, 'The request is not multipart/form-data');
  }
  if (typeof message !== 'string') return null;
  if (/unexpected end of multipart data/i.test(message)) return plainError(400, ENDS_EARLY);
  if (/^Multipart: Boundary not found|^Boundary required|needle/i.test(message)) return plainError(400, boundaryProblem(undefined)!);
  if (/^Unsupported content type/.test(message)) return frameworkError(415, 'The request is not multipart/form-data');
  if (/Malformed (part )?header/i.test(message)) return plainError(400, 'A part of the multipart body has a malformed header');
  return null;
}

const asClientError = (error: unknown) => multipartError(error) ?? error;

async function settle<T>(step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (error) {
    throw asClientError(error);
  }
}

async function drain(part: MultipartFile): Promise<void> {
  try {
    for await (const _ of part.file);
  } catch {
    // the body is refused anyway
  }
}

export interface Upload {
  filename: string;
  mimetype: string;
  /** The text fields sent before the file part. */
  fields: Record<string, string>;
  /** The file's bytes. Ends only once the rest of the body has been read and found sound;
   *  throws an ApiError (4xx) when the body proves broken: no bytes of a broken body are the
   *  last ones. */
  content: AsyncIterable<Buffer>;
}

/** The file part named `field` of a multipart/form-data request. Throws an ApiError (400) for
 *  a body that is broken before the file starts or that has no such part. */
export async function readUpload(request: FastifyRequest, field: string): Promise<Upload> {
  const problem = boundaryProblem(request.headers['content-type']);
  if (problem) throw plainError(400, problem);
  const parts = request.parts()[Symbol.asyncIterator]();
  const fields: Record<string, string> = {};
  let file: MultipartFile | null = null;
  for (;;) {
    const next: IteratorResult<Multipart> = await settle(parts.next());
    if (next.done) break;
    const part = next.value;
    if (part.type === 'field') {
      if (typeof part.value === 'string') fields[part.fieldname] = part.value;
      continue;
    }
    if (part.fieldname !== field) {
      await drain(part);
      throw plainError(
        400,
        part.fieldname
          ? `Send the file as a multipart part named ${field} (this one is named ${JSON.stringify(part.fieldname.slice(0, 100))})`
          : `A multipart file part has no name: send the file as a part named ${field}`,
      );
    }
    if ((part.filename ?? '').length > MAX_FILENAME) throw plainError(400, `The file name is longer than ${MAX_FILENAME} characters`);
    file = part;
    break;
  }
  if (!file) throw plainError(400, `Send the file as a multipart part named ${field}`);
  const upload = file;
  async function* content(): AsyncGenerator<Buffer> {
    let size = 0;
    try {
      for await (const chunk of upload.file as AsyncIterable<Buffer>) {
        size += chunk.length;
        yield chunk;
      }
    } catch (error) {
      throw asClientError(error);
    }
    if (size === 0) throw plainError(400, `The file part ${field} is empty`);
    // The rest of the body: text fields at most, up to the closing boundary.
    for (;;) {
      const next: IteratorResult<Multipart> = await settle(parts.next());
      if (next.done) return;
      if (next.value.type === 'file') {
        await drain(next.value);
        throw multipartError({ code: 'FST_FILES_LIMIT' })!;
      }
    }
  }
  return { filename: upload.filename ?? '', mimetype: upload.mimetype ?? '', fields, content: content() };
}
