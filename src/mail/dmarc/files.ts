// A DMARC aggregate report file as receivers send it (RFC 7489 §7.2.1.1: the XML plain, or
// gzip- or zip-compressed) to the XML text inside, with every size bounded so that a hostile
// file (a zip or gzip bomb, a huge attachment) costs at most the limits below.
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import type yauzl from 'yauzl';
import { lazyModule } from '../../platform/lazy-module.ts';
import { DmarcReportError } from './errors.ts';

/** The largest report file (compressed, as attached or uploaded) that is opened at all. */
// yauzl loads with the first zipped report.
const zipReader = lazyModule<typeof yauzl>('yauzl');

export const MAX_REPORT_FILE_BYTES = 16 * 1024 * 1024;
/** The largest XML a report may decompress to: a big receiver's daily report for a busy domain
 *  is a few megabytes; this leaves room for tens of thousands of records, never gigabytes. */
export const MAX_REPORT_XML_BYTES = 32 * 1024 * 1024;
/** Zip entries looked at before giving up (reports hold one XML file). */
const MAX_ZIP_ENTRIES = 16;

const gunzipAsync = promisify(gunzip);
const MB = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;

export type ReportFileFormat = 'xml' | 'gzip' | 'zip';

/** What the bytes are, by their magic numbers (names and MIME types vary too much to trust). */
export function reportFileFormat(bytes: Buffer): ReportFileFormat {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50) return 'zip';
  return 'xml';
}

async function gunzipBounded(bytes: Buffer): Promise<Buffer> {
  try {
    // maxOutputLength stops inflating once the output would pass the limit.
    return await gunzipAsync(bytes, { maxOutputLength: MAX_REPORT_XML_BYTES });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      throw new DmarcReportError(`The gzip file decompresses to more than ${MB(MAX_REPORT_XML_BYTES)}`);
    }
    throw new DmarcReportError(`The gzip file could not be decompressed: ${(error as Error).message}`);
  }
}

async function readZipEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  // The declared size is checked first; yauzl then refuses a stream that inflates past it
  // (validateEntrySizes), and the count below is a second fence.
  if (entry.uncompressedSize > MAX_REPORT_XML_BYTES) {
    throw new DmarcReportError(`The zip entry ${entry.fileName} decompresses to more than ${MB(MAX_REPORT_XML_BYTES)}`);
  }
  if (entry.isEncrypted()) throw new DmarcReportError(`The zip entry ${entry.fileName} is encrypted`);
  const stream = await zip.openReadStreamPromise(entry);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > MAX_REPORT_XML_BYTES) {
      stream.destroy();
      throw new DmarcReportError(`The zip entry ${entry.fileName} decompresses to more than ${MB(MAX_REPORT_XML_BYTES)}`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function unzipFirstXml(bytes: Buffer): Promise<Buffer> {
  let zip: yauzl.ZipFile;
  try {
    // autoClose off: an entry passed over can still be read after the listing ends.
    zip = await zipReader().fromBufferPromise(bytes, {
      lazyEntries: true,
      autoClose: false,
      validateEntrySizes: true,
      strictFileNames: false,
    });
  } catch (error) {
    throw new DmarcReportError(`The zip file could not be read: ${(error as Error).message}`);
  }
  try {
    const files: yauzl.Entry[] = [];
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/')) continue;
      if (/\.xml$/i.test(entry.fileName)) return await readZipEntry(zip, entry);
      files.push(entry);
      if (files.length >= MAX_ZIP_ENTRIES) break;
    }
    // A lone file without the .xml suffix is still read (some reporters name it oddly).
    if (files.length === 1) return await readZipEntry(zip, files[0]);
    throw new DmarcReportError('The zip file holds no XML report');
  } catch (error) {
    if (error instanceof DmarcReportError) throw error;
    throw new DmarcReportError(`The zip file could not be read: ${(error as Error).message}`);
  } finally {
    zip.close();
  }
}

/** The XML bytes of a report file (plain, gzip or zip). Throws DmarcReportError with the reason. */
export async function reportXmlBytes(bytes: Buffer): Promise<Buffer> {
  if (bytes.length === 0) throw new DmarcReportError('The report file is empty');
  if (bytes.length > MAX_REPORT_FILE_BYTES) throw new DmarcReportError(`The report file is larger than ${MB(MAX_REPORT_FILE_BYTES)}`);
  const format = reportFileFormat(bytes);
  if (format === 'gzip') return gunzipBounded(bytes);
  if (format === 'zip') return unzipFirstXml(bytes);
  if (bytes.length > MAX_REPORT_XML_BYTES) throw new DmarcReportError(`The XML report is larger than ${MB(MAX_REPORT_XML_BYTES)}`);
  return bytes;
}

export interface ReportFileName {
  receiver: string;
  domain: string;
  begin: number;
  end: number;
}

/** The parts of a report file name (RFC 7489 §7.2.1.1: `receiver!policy-domain!begin!end[!id].ext`),
 *  which still tell who sent a report whose content cannot be read. */
export function parseReportFilename(name: string | null): ReportFileName | null {
  const match = /^([A-Za-z0-9.-]{1,253})!([A-Za-z0-9.-]{1,253})!(\d{9,11})!(\d{9,11})(?:![^.]*)?\./.exec(name ?? '');
  if (!match) return null;
  return { receiver: match[1].toLowerCase(), domain: match[2].toLowerCase(), begin: Number(match[3]), end: Number(match[4]) };
}
