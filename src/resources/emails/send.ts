// POST /emails with the Idempotency-Key rules of the spec: a stored response is replayed (200,
// nothing sent, no credits, but the sending limits still checked); a failed request releases
// the key; the stored response commits in the same transaction as the emails.
import type { AppContext } from '../../platform/context.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { beginIdempotent, completeIdempotent, parseIdempotencyKey, releaseIdempotent } from '../../platform/idempotency.ts';
import { checkSendLimits, rateLimitHeaders } from '../../platform/limits.ts';
import { plainError } from '../../platform/http/errors.ts';
import { getWorkspace } from '../workspaces/service.ts';
import { acceptMessage, type AcceptRequest } from './accept.ts';
import { sendResponse } from './objects.ts';
import type { EmailRow } from './objects.ts';

export interface SendOutcome {
  status: 200;
  body: unknown;
  headers: Record<string, string>;
}

/** Runs `build` then `acceptMessage` under the request's Idempotency-Key, if it has one. */
export async function acceptIdempotently(
  ctx: AppContext,
  principal: Principal,
  idempotencyHeader: string | string[] | undefined,
  build: () => Promise<AcceptRequest>,
  respond: (rows: EmailRow[], request: AcceptRequest) => unknown,
): Promise<SendOutcome> {
  const key = parseIdempotencyKey(idempotencyHeader);
  const claim = key ? await beginIdempotent(ctx.db, principal.workspaceId, key) : null;
  if (claim?.kind === 'replay') {
    // Replays are still rate-checked (spec): a full window answers 429 even for a replay.
    const workspace = await getWorkspace(ctx.db, principal.workspaceId);
    if (!workspace) throw plainError(404, 'Workspace not found');
    const check = await checkSendLimits(ctx.db, workspace);
    if (!check.ok) throw check.error;
    return { status: 200, body: claim.body, headers: rateLimitHeaders(check.state) };
  }
  try {
    const request = await build();
    let body: unknown;
    const accepted = await acceptMessage(ctx, principal, {
      ...request,
      inTransaction: async (tx, rows) => {
        await request.inTransaction?.(tx, rows);
        if (claim && key) {
          body = respond(rows, request);
          await completeIdempotent(tx, principal.workspaceId, key, claim.token, 200, body);
        }
      },
    });
    return { status: 200, body: body ?? respond(accepted.rows, request), headers: accepted.headers };
  } catch (error) {
    if (claim && key) await releaseIdempotent(ctx.db, principal.workspaceId, key, claim.token).catch(() => {});
    throw error;
  }
}

export function sendResponseFor(rows: EmailRow[], request: AcceptRequest) {
  const addresses = (list: { address: string }[], taken: Set<string>) =>
    list
      .map((a) => a.address)
      .filter((a) => {
        const k = a.toLowerCase();
        if (taken.has(k)) return false;
        taken.add(k);
        return true;
      });
  const taken = new Set<string>();
  const to = addresses(request.message.to, taken);
  const cc = addresses(request.message.cc, taken);
  const bcc = addresses(request.message.bcc, taken);
  return sendResponse(rows, { to, cc, bcc });
}
