// DMARC aggregate reports (RFC 7489 §7.2 and appendix C): the XML a receiver sends once a day,
// read with fast-xml-parser into a checked, typed report. Hostile XML is refused before it is
// parsed: a DOCTYPE (the door to entity expansion and external entities) never belongs in a
// report, and the parser's own entity limits stay on as a second fence.
import { isIP } from 'node:net';
import type { XMLParser } from 'fast-xml-parser';
import { lazyModule } from '../../platform/lazy-module.ts';
import { DmarcReportError } from './errors.ts';

/** Records read from one report at most (a very busy domain's daily report has thousands). */
export const MAX_AGGREGATE_RECORDS = 50_000;

export type Disposition = 'none' | 'quarantine' | 'reject';
export type Verdict = 'pass' | 'fail';

export interface PublishedPolicy {
  domain: string;
  adkim: string | null;
  aspf: string | null;
  p: string | null;
  sp: string | null;
  np: string | null;
  pct: number | null;
  fo: string | null;
}

export interface DkimResult {
  domain: string;
  selector: string | null;
  result: string;
  human_result: string | null;
}

export interface SpfResult {
  domain: string;
  scope: string | null;
  result: string;
}

export interface AggregateRecord {
  sourceIp: string;
  count: number;
  disposition: Disposition;
  /** policy_evaluated: DKIM and SPF after alignment, as the receiver judged them. */
  dkim: Verdict;
  spf: Verdict;
  /** DMARC passes when either aligned check passes. */
  dmarc: Verdict;
  reasons: Array<{ type: string; comment: string | null }>;
  headerFrom: string;
  envelopeFrom: string | null;
  envelopeTo: string | null;
  dkimResults: DkimResult[];
  spfResults: SpfResult[];
}

export interface AggregateReport {
  orgName: string;
  email: string | null;
  extraContactInfo: string | null;
  reportId: string;
  /** The reporting period, epoch seconds (UTC). */
  begin: number;
  end: number;
  errors: string[];
  policy: PublishedPolicy;
  records: AggregateRecord[];
}

type Node = Record<string, unknown>;

// Elements that may repeat; the parser gives every one of them as an array.
const REPEATED = new Set(['record', 'dkim', 'spf', 'reason', 'error']);

// fast-xml-parser loads with the first report read, not in every process that imports this.
const fxp = lazyModule<typeof import('fast-xml-parser')>('fast-xml-parser');
let parser: XMLParser | null = null;
const newParser = () =>
  new (fxp().XMLParser)({
    ignoreAttributes: true,
    removeNSPrefix: true, // DMARCbis reports carry a namespace
    parseTagValue: false, // values stay text: report ids such as 0012 keep their zeros
    trimValues: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
    processEntities: { enabled: true, maxEntityCount: 0, maxTotalExpansions: 10_000, maxExpandedLength: 100_000 },
    maxNestedTags: 32,
    // policy_evaluated's single dkim and spf become arrays too; text() takes their first.
    isArray: (name) => REPEATED.has(name),
  });

/** The XML text of the bytes: a byte-order mark or the declaration's encoding decides. */
export function decodeXml(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  const head = bytes.subarray(0, 200).toString('latin1');
  const declared = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1];
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(declared ?? 'utf-8');
  } catch {
    throw new DmarcReportError(`The XML declares an unknown encoding "${declared}"`);
  }
  return decoder.decode(bytes);
}

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A leaf's text (the first one when it repeats), or null when absent or empty. */
function text(node: Node | undefined, key: string): string | null {
  let value = node?.[key];
  if (Array.isArray(value)) value = value[0];
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

function required(node: Node | undefined, key: string, where: string): string {
  const value = text(node, key);
  if (value === null) throw new DmarcReportError(`${where}${key} is missing`);
  return value;
}

function child(node: Node | undefined, key: string): Node | undefined {
  let value = node?.[key];
  if (Array.isArray(value)) value = value[0];
  return isNode(value) ? value : undefined;
}

function children(node: Node | undefined, key: string): Node[] {
  const value = node?.[key];
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(isNode);
}

function seconds(value: string, where: string): number {
  if (!/^\d{1,12}(\.\d+)?$/.test(value.trim())) throw new DmarcReportError(`${where} is not a Unix time: ${value.slice(0, 40)}`);
  const n = Math.floor(Number(value));
  // 1990 to 2100: anything else is a broken report, and could not become a date anyway.
  if (n < 631_152_000 || n > 4_102_444_800) throw new DmarcReportError(`${where} is out of range: ${value}`);
  return n;
}

function verdict(value: string, where: string): Verdict {
  const v = value.toLowerCase();
  if (v !== 'pass' && v !== 'fail') throw new DmarcReportError(`${where} must be pass or fail, not "${value.slice(0, 40)}"`);
  return v;
}

const lower = (value: string | null) => (value === null ? null : value.toLowerCase());

function readRecord(record: Node, index: number): AggregateRecord {
  const where = `record ${index + 1}: `;
  const row = child(record, 'row');
  if (!row) throw new DmarcReportError(`${where}row is missing`);
  const sourceIp = required(row, 'source_ip', `${where}row.`).toLowerCase();
  if (!isIP(sourceIp)) throw new DmarcReportError(`${where}source_ip "${sourceIp.slice(0, 60)}" is not an IP address`);
  const countText = required(row, 'count', `${where}row.`);
  if (!/^\d{1,12}$/.test(countText)) throw new DmarcReportError(`${where}count "${countText.slice(0, 40)}" is not a whole number`);
  const evaluated = child(row, 'policy_evaluated');
  if (!evaluated) throw new DmarcReportError(`${where}row.policy_evaluated is missing`);
  const disposition = required(evaluated, 'disposition', `${where}policy_evaluated.`).toLowerCase();
  if (disposition !== 'none' && disposition !== 'quarantine' && disposition !== 'reject') {
    throw new DmarcReportError(`${where}disposition must be none, quarantine or reject, not "${disposition.slice(0, 40)}"`);
  }
  const dkim = verdict(required(evaluated, 'dkim', `${where}policy_evaluated.`), `${where}policy_evaluated.dkim`);
  const spf = verdict(required(evaluated, 'spf', `${where}policy_evaluated.`), `${where}policy_evaluated.spf`);
  const identifiers = child(record, 'identifiers');
  const auth = child(record, 'auth_results');
  return {
    sourceIp,
    count: Number(countText),
    disposition,
    dkim,
    spf,
    dmarc: dkim === 'pass' || spf === 'pass' ? 'pass' : 'fail',
    reasons: children(evaluated, 'reason').map((reason) => ({
      type: lower(text(reason, 'type')) ?? 'other',
      comment: text(reason, 'comment'),
    })),
    headerFrom: required(identifiers, 'header_from', `${where}identifiers.`).toLowerCase(),
    envelopeFrom: lower(text(identifiers, 'envelope_from')),
    envelopeTo: lower(text(identifiers, 'envelope_to')),
    dkimResults: children(auth, 'dkim').map((r) => ({
      domain: (text(r, 'domain') ?? '').toLowerCase(),
      selector: text(r, 'selector'),
      result: lower(text(r, 'result')) ?? 'none',
      human_result: text(r, 'human_result'),
    })),
    spfResults: children(auth, 'spf').map((r) => ({
      domain: (text(r, 'domain') ?? '').toLowerCase(),
      scope: lower(text(r, 'scope')),
      result: lower(text(r, 'result')) ?? 'none',
    })),
  };
}

function notWellFormed(err: { code: string; msg: string; line: number; col: number }): string {
  // The validator reports elements left open at the end as a JSON list of their names.
  const open = err.code === 'InvalidXml' ? /^Invalid '(\[.*\])' found\.$/s.exec(err.msg)?.[1] : undefined;
  if (open) {
    try {
      return `The XML is cut off: it ends inside ${(JSON.parse(open) as string[]).join(', ')}`;
    } catch {
      // not the list it usually is: the general message below
    }
  }
  return `The XML is not well-formed (line ${err.line}, column ${err.col}): ${err.msg.replace(/\s+/g, ' ')}`;
}

/** Reads an aggregate report's XML. Throws DmarcReportError saying what is wrong. */
export function parseAggregateXml(xml: string): AggregateReport {
  const body = xml.replace(/^\uFEFF/, '');
  if (/<!DOCTYPE|<!ENTITY/i.test(body))
    throw new DmarcReportError('The XML has a DOCTYPE or entity declarations, which reports never carry; refused');
  const valid = fxp().XMLValidator.validate(body);
  if (valid !== true) throw new DmarcReportError(notWellFormed(valid.err));
  let document: Node;
  try {
    document = (parser ??= newParser()).parse(body) as Node;
  } catch (error) {
    throw new DmarcReportError(`The XML could not be read: ${(error as Error).message}`);
  }
  const feedback = child(document, 'feedback');
  if (!feedback) throw new DmarcReportError('The XML is not a DMARC aggregate report (no <feedback> root element)');
  const metadata = child(feedback, 'report_metadata');
  if (!metadata) throw new DmarcReportError('report_metadata is missing');
  const range = child(metadata, 'date_range');
  if (!range) throw new DmarcReportError('report_metadata.date_range is missing');
  const published = child(feedback, 'policy_published');
  if (!published) throw new DmarcReportError('policy_published is missing');
  const pct = text(published, 'pct');
  const records = children(feedback, 'record');
  if (records.length > MAX_AGGREGATE_RECORDS)
    throw new DmarcReportError(`The report has ${records.length} records; at most ${MAX_AGGREGATE_RECORDS} are read`);
  return {
    orgName: required(metadata, 'org_name', 'report_metadata.'),
    email: text(metadata, 'email'),
    extraContactInfo: text(metadata, 'extra_contact_info'),
    reportId: required(metadata, 'report_id', 'report_metadata.'),
    begin: seconds(required(range, 'begin', 'date_range.'), 'date_range.begin'),
    end: seconds(required(range, 'end', 'date_range.'), 'date_range.end'),
    errors: ((metadata.error as unknown[] | undefined) ?? []).filter((e): e is string => typeof e === 'string' && e !== ''),
    policy: {
      domain: required(published, 'domain', 'policy_published.').toLowerCase(),
      adkim: lower(text(published, 'adkim')),
      aspf: lower(text(published, 'aspf')),
      p: lower(text(published, 'p')),
      sp: lower(text(published, 'sp')),
      np: lower(text(published, 'np')),
      pct: pct !== null && /^\d{1,3}$/.test(pct) ? Number(pct) : null,
      fo: text(published, 'fo'),
    },
    records: records.map(readRecord),
  };
}
