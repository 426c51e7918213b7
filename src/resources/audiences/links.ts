// Signed links of the hosted pages: a double opt-in confirmation (`subc_` id) and an
// audience-level unsubscribe (`sub_` id). The MAC (HMAC-SHA256 with a key derived from the
// service's secret, truncated to 128 bits) makes links unguessable and unforgeable; they
// carry no expiry of their own (a confirmation row has one; unsubscribe links must keep
// working for mail sent months ago).
import { timingSafeEqual } from 'node:crypto';
import { hmacSha256, subkey } from '../../platform/hmac.ts';
import type { AppContext } from '../../platform/context.ts';

export type LinkKind = 'confirm' | 'leave';

function mac(ctx: AppContext, kind: LinkKind, id: string): string {
  return hmacSha256(subkey(ctx.verpSecret, 'postlane subscription links v1'), `${kind}:${id}`).toString('base64url').slice(0, 22);
}

export function signLink(ctx: AppContext, kind: LinkKind, id: string): string {
  return `${id}.${mac(ctx, kind, id)}`;
}

/** The id a signed token names, or null when the token is not ours. */
export function verifyLink(ctx: AppContext, kind: LinkKind, token: string): string | null {
  const dot = token.lastIndexOf('.');
  if (dot <= 0 || token.length > 120) return null;
  const id = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1));
  const expected = Buffer.from(mac(ctx, kind, id));
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
}

export const confirmUrl = (ctx: AppContext, confirmationId: string) =>
  `${ctx.config.publicUrl}/subscribe/confirm/${signLink(ctx, 'confirm', confirmationId)}`;
export const leaveUrl = (ctx: AppContext, subscriberId: string) =>
  `${ctx.config.publicUrl}/subscribe/leave/${signLink(ctx, 'leave', subscriberId)}`;
export const subscribePageUrl = (ctx: AppContext, token: string) => `${ctx.config.publicUrl}/subscribe/${token}`;
