// Attachments of a send (https://emailit.com/docs/email-api.md): allowed extensions, content xor
// url, base64 or hex content, inline parts by content_id, and URLs fetched at send time through the
// SSRF-safe fetcher (30 s, 25 MB, no redirects, no private addresses).
import type { Resolver } from 'node:dns/promises';
import { extname } from 'node:path';
import { fetchPinned, FetchError, parseHttpUrl, resolvePublicAddress, UrlRefusedError } from '../../platform/net.ts';

export const ALLOWED_EXTENSIONS = new Set(
  (
    'txt csv log css ics xml ' +
    'jpg jpe jpeg gif png bmp psd tif tiff svg indd ai eps ' +
    'doc docx rtf odt ott pdf pub pages mobi epub ' +
    'mp3 m4a m4v wma ogg flac wav aif aifc aiff ' +
    'mp4 mov avi mkv mpeg mpg wmv ' +
    'xls xlsx ods numbers ' +
    'odp ppt pptx pps key ' +
    'zip vcf eml p7c p7m p7s pgp asc sig'
  ).split(' '),
);

export const URL_ATTACHMENT_MAX_BYTES = 25 * 1024 * 1024;
export const URL_ATTACHMENT_TIMEOUT_MS = 30_000;

export interface AttachmentInput {
  filename?: unknown;
  content?: unknown;
  url?: unknown;
  content_type?: unknown;
  content_id?: unknown;
  encoding?: unknown;
}

/** An attachment ready to store: content as base64. */
export interface StoredAttachment {
  filename: string;
  content_type: string;
  content_id: string | null;
  content: string; // base64
  size: number;
}

export function hasAllowedExtension(filename: string): boolean {
  return ALLOWED_EXTENSIONS.has(extname(filename).slice(1).toLowerCase());
}

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;
const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/** Checks the attachments' shape; returns error texts (empty when fine). */
export function validateAttachments(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return ['attachments must be an array'];
  const errors: string[] = [];
  value.forEach((item: AttachmentInput, i) => {
    const at = `attachments[${i}]`;
    if (typeof item !== 'object' || item === null) return void errors.push(`${at} must be an object`);
    if (typeof item.filename !== 'string' || item.filename.trim() === '') errors.push(`${at}.filename is required`);
    else if (!hasAllowedExtension(item.filename)) errors.push(`${at}.filename "${item.filename}" does not have an allowed extension`);
    const hasContent = item.content !== undefined && item.content !== null;
    const hasUrl = item.url !== undefined && item.url !== null;
    if (hasContent && hasUrl) errors.push(`${at} must have either content or url, not both`);
    if (!hasContent && !hasUrl) errors.push(`${at} must have content or url`);
    if (hasContent) {
      const encoding = item.encoding === undefined || item.encoding === null ? 'base64' : item.encoding;
      if (typeof item.content !== 'string') errors.push(`${at}.content must be a string`);
      else if (encoding !== 'base64' && encoding !== 'hex') errors.push(`${at}.encoding must be base64 or hex`);
      else if (!(encoding === 'hex' ? HEX : BASE64).test(item.content)) errors.push(`${at}.content is not valid ${encoding}`);
      if (typeof item.content_type !== 'string' || item.content_type.trim() === '')
        errors.push(`${at}.content_type is required with content`);
    }
    if (hasUrl) {
      if (typeof item.url !== 'string') errors.push(`${at}.url must be a string`);
      else {
        try {
          parseHttpUrl(item.url);
        } catch {
          errors.push(`${at}.url must be an http or https URL`);
        }
      }
    }
    if (item.content_type !== undefined && item.content_type !== null && typeof item.content_type !== 'string')
      errors.push(`${at}.content_type must be a string`);
    if (item.content_id !== undefined && item.content_id !== null && typeof item.content_id !== 'string')
      errors.push(`${at}.content_id must be a string`);
  });
  return errors;
}

export class AttachmentFetchError extends Error {}

async function download(url: string, resolver: Resolver, allowPrivate: boolean): Promise<{ body: Buffer; contentType: string | null }> {
  const parsed = parseHttpUrl(url);
  let address;
  try {
    address = await resolvePublicAddress(resolver, parsed.hostname, allowPrivate);
  } catch (error) {
    if (error instanceof UrlRefusedError) throw new AttachmentFetchError(`${url}: ${error.message}`);
    throw error;
  }
  try {
    const response = await fetchPinned(parsed, address, { timeoutMs: URL_ATTACHMENT_TIMEOUT_MS, maxBytes: URL_ATTACHMENT_MAX_BYTES });
    if (response.status >= 300 && response.status < 400)
      throw new AttachmentFetchError(`${url}: redirects are not followed (HTTP ${response.status})`);
    if (response.status < 200 || response.status >= 300)
      throw new AttachmentFetchError(`${url}: the server answered HTTP ${response.status}`);
    const type = response.headers['content-type'];
    return { body: response.body, contentType: typeof type === 'string' ? type.split(';')[0].trim() : null };
  } catch (error) {
    if (error instanceof FetchError) {
      const why =
        error.kind === 'too_large' ? 'larger than 25 MB' : error.kind === 'timeout' ? 'did not finish within 30 seconds' : error.message;
      throw new AttachmentFetchError(`${url}: ${why}`);
    }
    throw error;
  }
}

/** Decodes content and fetches URLs (in parallel). Call after validateAttachments passed. */
export async function loadAttachments(value: unknown, resolver: () => Resolver, allowPrivate: boolean): Promise<StoredAttachment[]> {
  if (!Array.isArray(value)) return [];
  return Promise.all(
    (value as AttachmentInput[]).map(async (item, i) => {
      const filename = String(item.filename).trim();
      const contentId = typeof item.content_id === 'string' && item.content_id.trim() ? item.content_id.trim().replace(/^<|>$/g, '') : null;
      if (typeof item.content === 'string') {
        const bytes = Buffer.from(item.content.replace(/\s+/g, ''), item.encoding === 'hex' ? 'hex' : 'base64');
        return {
          filename,
          content_type: String(item.content_type).trim(),
          content_id: contentId,
          content: bytes.toString('base64'),
          size: bytes.length,
        };
      }
      try {
        const { body, contentType } = await download(String(item.url), resolver(), allowPrivate);
        const type =
          typeof item.content_type === 'string' && item.content_type.trim()
            ? item.content_type.trim()
            : (contentType ?? 'application/octet-stream');
        return { filename, content_type: type, content_id: contentId, content: body.toString('base64'), size: body.length };
      } catch (error) {
        if (error instanceof AttachmentFetchError) throw new AttachmentFetchError(`attachments[${i}].url ${error.message}`);
        throw error;
      }
    }),
  );
}
