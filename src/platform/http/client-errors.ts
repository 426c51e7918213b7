// The 4xx a request's own fault earns, with a message that says what is wrong: errors raised by
// Fastify while reading a body (too large, unknown content type, a length that does not match)
// and by the multipart parser, as the spec's error shapes. Shared by the API's error handler
// (app.ts) and the hosted pages', which answer the same status as an HTML page.
import type { FastifyRequest } from 'fastify';
import { ApiError, bodyTooLarge, excerpt, frameworkError } from './errors.ts';
import { multipartError } from './multipart.ts';

/** The ApiError `error` stands for when the request is at fault, or null (a server error). */
export function clientErrorOf(error: unknown, request: FastifyRequest): ApiError | null {
  if (error instanceof ApiError) return error;
  const { code, statusCode, message } = (error ?? {}) as { code?: string; statusCode?: number; message?: string };
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // The route's own limit when it sets one, else the server's (app.ts BODY_LIMIT).
      return bodyTooLarge(request.routeOptions.bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedContentType(request.headers['content-type']);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return frameworkError(400, 'The request body is not as long as its Content-Length header says');
  }
  const multipart = multipartError(error);
  if (multipart) return multipart;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) return frameworkError(statusCode, message || 'Bad request');
  return null;
}

export const unsupportedContentType = (contentType: string | undefined) =>
  frameworkError(
    415,
    contentType
      ? `Unsupported Content-Type: ${JSON.stringify(excerpt(contentType, 100))}`
      : 'Send a Content-Type header with the request body',
  );
