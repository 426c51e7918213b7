// How other resources ask whether an id names one of a workspace's sending domains.
import type { Executor } from '../../platform/db/database.ts';

/** The workspace's domain id for `domainId` (a `dom_` id, or an older `sd_`/`sed_` one), or
 *  null when no domain of that workspace has it. */
export async function findWorkspaceDomainId(tx: Executor, workspaceId: string, domainId: string): Promise<string | null> {
  if (!/^(dom|sd|sed)_[A-Za-z0-9]+$/.test(domainId)) return null;
  const row = await tx
    .selectFrom('domains')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', domainId)
    .executeTakeFirst();
  return row?.id ?? null;
}
