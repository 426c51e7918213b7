// POST /v2/contacts/import (a CSV or JSON file as multipart/form-data or as the request body
// itself, streamed) and GET /v2/contacts/export (CSV, streamed). Paths of ours; the spec
// says only that export takes the list's parameters.
import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../platform/context.ts';
import type { Query } from '../../platform/http/lists.ts';
import { ApiError, plainError } from '../../platform/http/errors.ts';
import { readUpload } from '../../platform/http/multipart.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { ContactListQuery, ImportSummary } from './schemas.ts';
import { countExport, exportContacts } from './export.ts';
import { ImportFileError, runImport, type ImportSummary as ImportSummaryValue } from './import/run.ts';

const tags = ['Contacts'];
const ImportQuery = Type.Object({
  audience_id: Type.Optional(
    Type.String({ description: 'aud_ id or name of an audience to add every row to (for multipart, a field before the file works too)' }),
  ),
  format: Type.Optional(
    Type.Union([Type.Literal('csv'), Type.Literal('json')], {
      description: 'default: from the content type or file name, else the first character',
    }),
  ),
});
type ImportParams = Static<typeof ImportQuery>;
const SMALL_UPLOAD_BYTES = 256 * 1024;
// One file of any size (streamed), a few short fields before it; a part's header lines are cut
// at 16 KB (busboy's headerSize, which the plugin's types do not name).
const MULTIPART_LIMITS = { fileSize: Number.MAX_SAFE_INTEGER, files: 1, fields: 20, fieldSize: 64 * 1024, headerSize: 16 * 1024 };

/** An import that stops early (a bad file, an unknown audience) leaves the rest of the body
 *  on the connection; Node drains only bodies nobody began to read, so without this the next
 *  request on a kept-alive connection would wait behind the unread bytes until a timeout.
 *  The abandoned reader (an async iterator's 'readable' listener, or multipart's pipe) would
 *  keep the stream paused: it is detached, and the rest is read and dropped. */
function discardUnreadBody(raw: IncomingMessage) {
  if (raw.complete || raw.destroyed) return;
  raw.unpipe();
  raw.removeAllListeners('readable');
  raw.on('data', () => {});
  raw.resume();
}

/** The upload's bytes; a broken body found once rows have been read is the import's file error
 *  (the summary says which rows are committed), before that a 400 of its own. */
async function* fileErrorsAfterStart(content: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let started = false;
  try {
    for await (const chunk of content) {
      started = true;
      yield chunk;
    }
  } catch (error) {
    if (started && error instanceof ApiError) throw new ImportFileError(error.message, 0);
    throw error;
  }
}

async function readWhole(input: AsyncIterable<Buffer | string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (error instanceof ImportFileError) throw plainError(400, error.message);
    throw plainError(400, 'The request body could not be read to its end');
  }
  return Buffer.concat(chunks);
}

interface ImportSource {
  input: AsyncIterable<Buffer>;
  typeHint: string | undefined;
  /** The audience_id field of a multipart body. */
  audience?: string;
}

/** The file of an import request: the file part of a multipart body, or the body itself. */
async function importSource(request: FastifyRequest, parseInThread: boolean): Promise<ImportSource> {
  let source: ImportSource;
  if (request.isMultipart()) {
    const upload = await readUpload(request, 'file');
    source = {
      input: fileErrorsAfterStart(upload.content),
      typeHint: `${upload.filename} ${upload.mimetype}`,
      audience: upload.fields.audience_id || undefined,
    };
  } else {
    if (!request.body) throw plainError(400, 'Send a CSV or JSON file as the request body or as multipart/form-data');
    source = { input: request.body as Readable, typeHint: request.headers['content-type'] };
  }
  // Parsed on this thread, the file is read whole first: a body found broken (cut short, a
  // second file) is refused before any row is written, and the parser never meets a failing stream.
  if (parseInThread) source.input = Readable.from([await readWhole(source.input)]);
  return source;
}

export async function registerContactTransfers(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/contacts/export',
    {
      schema: {
        tags,
        querystring: ContactListQuery,
        description:
          "The list's search, filters and sort as a streamed CSV. The x-total-count header says how many contacts follow (for a progress bar).",
        response: {
          200: {
            description: 'CSV of the matching contacts (x-total-count: their number)',
            content: { 'text/csv': { schema: Type.String({ description: 'A header line, then one line per contact' }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const query = request.query as Query;
      const total = await countExport(ctx.db, request.principal.workspaceId, query);
      const lines = exportContacts(ctx.db, request.principal.workspaceId, query);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('x-total-count', String(total))
        .header('content-disposition', 'attachment; filename="contacts.csv"')
        .send(Readable.from(lines));
    },
  );

  await app.register(async (scoped) => {
    // This route reads its body itself, as a stream, whatever its type and size.
    scoped.removeAllContentTypeParsers();
    scoped.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    await scoped.register(multipart, { limits: MULTIPART_LIMITS });
    scoped.post(
      '/contacts/import',
      {
        schema: {
          tags,
          querystring: ImportQuery,
          description:
            'Imports contacts from a CSV (header row with an email column) or a JSON array of objects, as multipart/form-data (a part named file) or as the body itself (text/csv, application/json). ' +
            'With `Accept: application/x-ndjson` the answer is streamed as it goes: one `contact_import_progress` line per committed batch, then the summary as the last line (its `status` says whether the import completed); an import that fails before its first batch answers as without it.',
          response: {
            200: {
              description: 'The import summary (or, with Accept: application/x-ndjson, progress lines then the summary)',
              content: {
                'application/json': { schema: ImportSummary },
                'application/x-ndjson': {
                  schema: Type.String({
                    description:
                      'Lines of JSON: {object: "contact_import_progress", rows, committed_rows, created, updated, unchanged, subscribed, skipped}, then the summary',
                  }),
                },
              },
            },
            400: Type.Union([ImportSummary, Type.Ref('Error')]),
            ...errorResponses({ 404: 'error', 429: 'rateLimit' }),
            422: ImportSummary,
          },
        },
      },
      async (request, reply) => {
        const query = request.query as ImportParams;
        // A small upload is parsed here (a worker thread takes about half a second to start);
        // a large one, or one of unknown length, in a worker, off the server's event loop.
        const length = Number(request.headers['content-length']);
        const parseInThread = Number.isFinite(length) && length < SMALL_UPLOAD_BYTES;
        let source: ImportSource;
        try {
          source = await importSource(request, parseInThread);
        } catch (error) {
          discardUnreadBody(request.raw);
          throw error;
        }
        const { input, typeHint } = source;
        const audience = query.audience_id || source.audience;
        // Progress as NDJSON when asked: the answer starts with the first committed batch.
        let progress: PassThrough | null = null;
        const onBatch = /application\/x-ndjson/.test(request.headers.accept ?? '')
          ? (s: Readonly<ImportSummaryValue>) => {
              if (!progress) {
                progress = new PassThrough();
                void reply.code(200).header('content-type', 'application/x-ndjson; charset=utf-8').send(progress);
              }
              const { rows, committed_rows, created, updated, unchanged, subscribed, skipped } = s;
              progress.write(
                `${JSON.stringify({ object: 'contact_import_progress', rows, committed_rows, created, updated, unchanged, subscribed, skipped })}\n`,
              );
            }
          : undefined;
        let summary: ImportSummaryValue;
        try {
          summary = await runImport(ctx.db, request.principal.workspaceId, input, {
            audience,
            format: query.format,
            typeHint,
            onBatch,
            parseInThread,
          });
        } finally {
          discardUnreadBody(request.raw);
        }
        const stream = progress as PassThrough | null;
        if (stream) {
          stream.end(`${JSON.stringify(summary)}\n`);
          return reply;
        }
        if (summary.status === 'completed') return summary;
        return reply.code(summary.committed_rows === 0 && summary.created + summary.updated === 0 ? 400 : 422).send(summary);
      },
    );
  });
}
