// What a mail sent to a domain's DMARC report address carries: the aggregate report files
// attached to it (Google zips them, Microsoft gzips them, some send the XML as it is), or,
// for a failure report, the whole message (RFC 6591 reports are a message format).
import type { ParsedMail } from 'mailparser';
import { simpleParser } from '../parse-mail.ts';
import { hasFeedbackReport } from './forensic.ts';

/** Attachments of one mail looked at, at most (a report mail carries one). */
const MAX_REPORT_FILES = 10;

export type FoundReport =
  | { type: 'aggregate'; filename: string | null; content: Buffer }
  | { type: 'forensic'; filename: null; content: Buffer };

const REPORT_TYPES = /^(application\/(zip|x-zip|x-zip-compressed|gzip|x-gzip|x-gunzip|gzip-compressed|xml|octet-stream)|text\/xml)$/i;
const REPORT_NAMES = /\.(zip|gz|gzip|xml)$/i;

export type ReportMessage = { reports: FoundReport[]; problem: string | null };

function reportsOf(mail: ParsedMail, raw: Buffer): ReportMessage {
  if (hasFeedbackReport(mail)) return { reports: [{ type: 'forensic', filename: null, content: raw }], problem: null };
  const files = mail.attachments.filter((a) => REPORT_TYPES.test(a.contentType) || REPORT_NAMES.test(a.filename ?? ''));
  if (files.length === 0)
    return { reports: [], problem: 'The message carries no DMARC report (no XML, gzip or zip attachment, no feedback report)' };
  return {
    reports: files
      .slice(0, MAX_REPORT_FILES)
      .map((a) => ({ type: 'aggregate' as const, filename: a.filename?.slice(0, 255) ?? null, content: a.content })),
    problem: null,
  };
}

/** The reports in a raw message (a mail that cannot be parsed carries none, with the reason). */
export async function reportsInMessage(raw: Buffer): Promise<ReportMessage> {
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextLinks: true, skipImageLinks: true });
  } catch (error) {
    return { reports: [], problem: `The message could not be parsed: ${(error as Error).message}` };
  }
  return reportsOf(mail, raw);
}

/** True when the bytes start like a mail message (a header field) rather than a report file
 *  (XML starts with `<`, gzip and zip with their magic numbers). */
export function looksLikeMessage(bytes: Buffer): boolean {
  return /^[A-Za-z0-9-]{1,76}:[ \t]/.test(bytes.subarray(0, 80).toString('latin1'));
}
