// mailparser's simpleParser, loaded with the first message parsed: it and its encodings
// (about 3 MB of heap) are only needed by processes that receive mail.
import type { ParsedMail, SimpleParserOptions, Source } from 'mailparser';

export async function simpleParser(source: Source, options?: SimpleParserOptions): Promise<ParsedMail> {
  const mailparser = await import('mailparser');
  return mailparser.simpleParser(source, options);
}
