// Open and click tracking of outgoing HTML: http(s) links become `http://<tracking host>/c/<token>`
// (the token names a stored link whose target is the original URL, byte for byte: query
// strings and fragments untouched) and a 1x1 pixel `http://<tracking host>/o/<token>.gif` is
// added before </body>. mailto:, tel:, anchors and relative links are left alone.
// Tokens are HMACs of the email id and the link's position: unguessable, and the same when a
// delivery is retried, so re-running a job reuses the links it stored the first time.
import { hkdfSync } from 'node:crypto';
import { hmacSha256 } from '../../../platform/hmac.ts';
import type { Executor } from '../../../platform/db/database.ts';
import { newId } from '../../../platform/ids.ts';
import { nowIso } from '../../../platform/clock.ts';
import './tables.ts';

export interface TrackingOptions {
  /** `<tracking_key>.<domain>`. */
  host: string;
  loads: boolean;
  clicks: boolean;
  /** Makes the token of a link slot (`c0`, `c1`, … and `o` for the pixel). */
  token: (slot: string) => string;
  /** URLs left untracked (a campaign's unsubscribe link). */
  untracked?: readonly string[];
}

export interface TrackedLink {
  token: string;
  url: string;
}

export interface TrackedHtml {
  html: string;
  links: TrackedLink[];
  pixelToken: string | null;
}

/** The tracking key, derived from the service's VERP secret (itself from the encryption key). */
export function deriveTrackingSecret(verpSecret: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', verpSecret, Buffer.alloc(0), 'postlane tracking v1', 32));
}

/** 32 URL-safe characters (192 bits). */
export function trackingToken(secret: Buffer, emailId: string, slot: string): string {
  return hmacSha256(secret, `${emailId}\0${slot}`).toString('base64url').slice(0, 32);
}

// An <a> start tag, attribute values may contain '>'.
const ANCHOR_TAG = /<a\b(?:[^>"']|"[^"]*"|'[^']*')*>/gi;
// The href attribute inside it (not data-href: preceded by whitespace), in any quoting.
const HREF = /(\shref\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'<>`]+))/i;
const NAMED: Record<string, string> = { amp: '&', quot: '"', apos: "'", lt: '<', gt: '>', nbsp: '\u00a0' };

/** The text of an attribute value (character references decoded, as a browser reads it). */
export function decodeAttribute(value: string): string {
  return value.replace(/&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

/** The absolute http(s) URL a link points to, or null when it is not to be tracked. */
export function trackableUrl(rawHref: string): string | null {
  // Browsers strip leading and trailing whitespace (and control characters) from URLs.
  const url = decodeAttribute(rawHref).replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
  if (!/^https?:\/\/[^/?#\s]/i.test(url)) return null;
  try {
    new URL(url);
  } catch {
    return null;
  }
  return url;
}

export function clickUrl(host: string, token: string): string {
  return `http://${host}/c/${token}`;
}

export function pixelUrl(host: string, token: string): string {
  return `http://${host}/o/${token}.gif`;
}

/** Applies click and open tracking to `html`. One link per distinct URL. */
export function applyTracking(html: string, options: TrackingOptions): TrackedHtml {
  const links: TrackedLink[] = [];
  const byUrl = new Map<string, TrackedLink>();
  let out = html;
  if (options.clicks) {
    out = out.replace(ANCHOR_TAG, (tag) =>
      tag.replace(HREF, (whole, prefix: string, dq?: string, sq?: string, bare?: string) => {
        const url = trackableUrl(dq ?? sq ?? bare ?? '');
        if (url === null || options.untracked?.includes(url)) return whole;
        let link = byUrl.get(url);
        if (!link) {
          link = { token: options.token(`c${links.length}`), url };
          links.push(link);
          byUrl.set(url, link);
        }
        const quote = sq !== undefined ? "'" : '"';
        return `${prefix}${quote}${clickUrl(options.host, link.token)}${quote}`;
      }),
    );
  }
  let pixelToken: string | null = null;
  if (options.loads) {
    pixelToken = options.token('o');
    const pixel = `<img src="${pixelUrl(options.host, pixelToken)}" width="1" height="1" alt="" style="border:0;width:1px;height:1px;" />`;
    const close = out.search(/<\/body\s*>(?![\s\S]*<\/body\s*>)/i);
    out = close >= 0 ? `${out.slice(0, close)}${pixel}${out.slice(close)}` : `${out}${pixel}`;
  }
  return { html: out, links, pixelToken };
}

/** Stores the links and pixel of one email; a retried delivery finds its rows already there. */
export async function storeTrackingLinks(db: Executor, email: { id: string; workspace_id: string }, tracked: TrackedHtml): Promise<void> {
  const now = nowIso();
  const rows = [
    ...tracked.links.map((link) => ({ kind: 'click', token: link.token, url: link.url })),
    ...(tracked.pixelToken ? [{ kind: 'open', token: tracked.pixelToken, url: null }] : []),
  ].map((row) => ({ id: newId('link'), email_id: email.id, workspace_id: email.workspace_id, created_at: now, ...row }));
  if (rows.length === 0) return;
  await db
    .insertInto('tracking_links')
    .values(rows)
    .onConflict((oc) => oc.column('token').doNothing())
    .execute();
}
