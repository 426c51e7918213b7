// Opens and clicks of tracked mail: each hit is stored; the first of a burst (same email, same
// link, within DEDUP_WINDOW_MS) emits email.loaded / email.clicked
// (https://emailit.com/docs/webhooks/event-types.md) and moves the email's status forward, in one
// transaction. Later hits of the burst are counted only.
import type { Db } from '../../platform/db/database.ts';
import { dialectOf } from '../../platform/db/database.ts';
import { isoFromMs, nowIso, nowMs } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { newId } from '../../platform/ids.ts';
import { parseMeta, type EmailRow, advanceEngagement, type TrackingLinksTable } from '../emails/service.ts';

/** Repeated opens (image reloads, proxies) and double clicks inside this window are one event. */
export const DEDUP_WINDOW_MS = 60_000;
const TOKEN = /^[A-Za-z0-9_-]{16,64}$/;

export interface Client {
  ip: string | null;
  userAgent: string | null;
}

export async function findLink(db: Db, token: string, kind: 'open' | 'click'): Promise<TrackingLinksTable | null> {
  if (!TOKEN.test(token)) return null;
  const link = await db.selectFrom('tracking_links').selectAll().where('token', '=', token).executeTakeFirst();
  return link && link.kind === kind ? link : null;
}

function emailSummary(email: EmailRow) {
  return {
    id: email.id,
    rcpt_to: email.to,
    mail_from: email.from_address,
    subject: email.subject,
    created_at: email.created_at,
    meta: parseMeta(email.meta),
  };
}

/** Records an open (pixel) or a click of `link`. Returns whether an event was emitted. */
export async function recordHit(db: Db, link: TrackingLinksTable, client: Client): Promise<boolean> {
  const kind = link.kind === 'click' ? 'click' : 'load';
  return db.transaction().execute(async (tx) => {
    // One hit at a time per email, so two simultaneous first opens cannot both emit.
    let emailQuery = tx.selectFrom('emails').selectAll().where('id', '=', link.email_id);
    if (dialectOf(db) === 'postgres') emailQuery = emailQuery.forUpdate();
    const email = await emailQuery.executeTakeFirst();
    if (!email) return false;
    const now = nowIso();
    let recent = tx
      .selectFrom('tracking_hits')
      .select('id')
      .where('email_id', '=', email.id)
      .where('kind', '=', kind)
      .where('created_at', '>', isoFromMs(nowMs() - DEDUP_WINDOW_MS));
    if (kind === 'click') recent = recent.where('link_id', '=', link.id);
    const duplicate = (await recent.limit(1).executeTakeFirst()) !== undefined;
    const id = newId(kind);
    const ip = client.ip?.slice(0, 64) ?? null;
    const userAgent = client.userAgent?.slice(0, 1000) ?? null;
    await tx
      .insertInto('tracking_hits')
      .values({
        id,
        workspace_id: email.workspace_id,
        email_id: email.id,
        link_id: kind === 'click' ? link.id : null,
        kind,
        ip_address: ip,
        user_agent: userAgent,
        emitted: duplicate ? 0 : 1,
        created_at: now,
      })
      .execute();
    if (duplicate) return false;
    await advanceEngagement(tx, email.id, kind === 'click' ? 'clicked' : 'loaded');
    const object =
      kind === 'click'
        ? {
            id,
            object: 'click',
            email: emailSummary(email),
            link: { id: link.id, url: link.url },
            ip_address: ip,
            user_agent: userAgent,
            created_at: now,
          }
        : { id, object: 'load', email: emailSummary(email), ip_address: ip, user_agent: userAgent, created_at: now };
    await emitEvent(tx, email.workspace_id, kind === 'click' ? 'email.clicked' : 'email.loaded', object);
    return true;
  });
}
