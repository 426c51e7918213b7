// DKIM signing (RFC 6376): d= the sending domain, s= the service's selector, relaxed/relaxed
// canonicalization, rsa-sha256. The signature header is prepended to the raw message, which
// must not change afterwards (compose with CRLF line endings first).
//
// Our own signer rather than mailauth's or nodemailer's: both take the key as PEM text and parse
// it again for every signature (a third of the cost of signing), and both stream the message
// through parsers although we always hold it whole in memory. Signing is the hot path of
// delivery; verification stays with mailauth (inbound mail, and the tests check our signatures
// with it).
import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

export interface DkimKey {
  /** d=: the domain of the From address. */
  domain: string;
  /** s=: DKIM_SELECTOR. */
  selector: string;
  /** PEM (PKCS#8 or PKCS#1) RSA private key, or one already parsed (see `parsedPrivateKey`). */
  privateKey: string | KeyObject;
}

export interface SignOptions {
  /** t=; defaults to now. */
  signTime?: Date;
}

// RFC 6376 §5.4.1's recommended fields (mailauth's default list): the ones a reader sees or
// that shape the content.
const SIGNED_FIELDS = new Set(
  (
    'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:' +
    'Content-ID:Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:' +
    'In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Subscribe:List-Post:List-Owner:List-Archive:' +
    'List-Unsubscribe-Post:Feedback-ID'
  )
    .toLowerCase()
    .split(':'),
);
const MIN_RSA_BITS = 1024;
const LINE = 76;

/** The message with a DKIM-Signature header in front. Throws when no signature could be made. */
export async function signMessage(raw: Buffer, key: DkimKey, options: SignOptions = {}): Promise<Buffer> {
  const domain = key.domain.toLowerCase();
  let privateKey: KeyObject;
  try {
    privateKey = typeof key.privateKey === 'string' ? parsedPrivateKey(key.privateKey) : key.privateKey;
    if (privateKey.asymmetricKeyType !== 'rsa' || (privateKey.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) {
      throw new Error(`an RSA key of at least ${MIN_RSA_BITS} bits is required`);
    }
  } catch (error) {
    throw new Error(`DKIM signing for ${domain} failed: ${(error as Error).message}`);
  }
  // Bytes as latin1 characters: canonicalization works on octets, whatever the charset.
  const text = raw.toString('latin1');
  const split = text.indexOf('\r\n\r\n');
  const headerBlock = split === -1 ? text : text.slice(0, split);
  const body = split === -1 ? '' : text.slice(split + 4);

  // Signed bottom-up, every instance (RFC 6376 §5.4.2: a verifier takes instances from the bottom).
  const fields = headerBlock.split(/\r\n(?![ \t])/).filter((field) => field.includes(':'));
  const signed = fields.reverse().filter((field) => SIGNED_FIELDS.has(fieldName(field).toLowerCase()));
  const tags = [
    'v=1',
    'a=rsa-sha256',
    'c=relaxed/relaxed',
    `d=${domain}`,
    `s=${key.selector}`,
    `t=${Math.floor((options.signTime ?? new Date()).getTime() / 1000)}`,
    `bh=${createHash('sha256').update(relaxedBody(body), 'latin1').digest('base64')}`,
    `h=${signed.map(fieldName).join(':')}`,
    'b=',
  ];
  const unsigned = fold('DKIM-Signature: ', tags);
  const data = signed.map((field) => relaxedHeader(field) + '\r\n').join('') + relaxedHeader(unsigned);
  const signature = (await signOnThreadPool(Buffer.from(data, 'latin1'), privateKey)).toString('base64');
  const header = `${unsigned}${foldBase64(signature, lastLineLength(unsigned))}\r\n`;
  return Buffer.concat([Buffer.from(header, 'latin1'), raw]);
}

/** The RSA signature, computed on libuv's thread pool: it is most of a message's build time
 *  (about 1 ms for a 2048-bit key here), and the calling thread composes the next message
 *  meanwhile instead of waiting for it. */
function signOnThreadPool(data: Buffer, privateKey: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    sign('sha256', data, privateKey, (error, signature) => (error ? reject(error) : resolve(signature))),
  );
}

// Parsing a PEM key costs more than the RSA signature itself: keep the parsed keys of the
// domains being sent from (a few; bounded).
const parsedKeys = new Map<string, KeyObject>();
export function parsedPrivateKey(pem: string): KeyObject {
  let parsed = parsedKeys.get(pem);
  if (!parsed) {
    parsed = createPrivateKey(pem);
    if (parsedKeys.size >= 256) parsedKeys.delete(parsedKeys.keys().next().value!);
    parsedKeys.set(pem, parsed);
  }
  return parsed;
}

const fieldName = (field: string) => field.slice(0, field.indexOf(':')).trim();

/** RFC 6376 §3.4.2: name lower-cased, value unfolded, runs of WSP as one SP, none at the ends. */
export function relaxedHeader(field: string): string {
  const colon = field.indexOf(':');
  const value = field
    .slice(colon + 1)
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
  return `${field.slice(0, colon).trim().toLowerCase()}:${value}`;
}

/** RFC 6376 §3.4.4: runs of WSP as one SP, none at line ends, no empty lines at the end. */
export function relaxedBody(body: string): string {
  const canonical = body
    .replace(/[ \t]+/g, ' ')
    .replace(/ \r\n/g, '\r\n')
    .replace(/ $/, '')
    .replace(/(\r\n)+$/, '');
  return canonical === '' ? '' : canonical + '\r\n';
}

/** `prefix` + tags joined by "; ", folded before a tag (or inside h= after a colon) to keep lines short. */
function fold(prefix: string, tags: string[]): string {
  let out = prefix;
  let lineLength = prefix.length;
  tags.forEach((tag, i) => {
    const pieces = tag.startsWith('h=') ? tag.split(/(?<=:)/) : [tag];
    pieces.forEach((piece, j) => {
      const text = j === 0 && i > 0 ? ` ${piece}` : piece;
      if (lineLength + text.length > LINE && lineLength > 1) {
        // FWS: the break goes before an existing space, or adds one after a colon of h=.
        out += j === 0 ? '\r\n' : '\r\n ';
        lineLength = j === 0 ? 0 : 1;
      }
      out += text;
      lineLength += text.length;
    });
    if (i < tags.length - 1) {
      out += ';';
      lineLength += 1;
    }
  });
  return out;
}

function foldBase64(value: string, used: number): string {
  const first = Math.max(0, LINE - used);
  let out = value.slice(0, first);
  for (let i = first; i < value.length; i += LINE - 1) out += `\r\n ${value.slice(i, i + LINE - 1)}`;
  return out;
}

const lastLineLength = (text: string) => text.length - (text.lastIndexOf('\n') + 1);

export interface DkimKeyPair {
  /** PEM PKCS#8, to seal and store. */
  privateKey: string;
  /** Base64 DER SubjectPublicKeyInfo: the p= value of the DNS record. */
  publicKey: string;
}

/** A new 2048-bit RSA key pair (one per domain). */
export function generateDkimKeyPair(): DkimKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'der' },
  });
  return { privateKey, publicKey: publicKey.toString('base64') };
}

/** The TXT value published at `<selector>._domainkey.<domain>` (https://emailit.com/docs/domains.md). */
export function dkimRecordValue(publicKey: string): string {
  return `v=DKIM1; t=s; h=sha256; p=${publicKey}`;
}
