// How other resources ask whether an id names one of a workspace's sending domains.
import type { Executor } from '../../platform/db/database.ts';

/** The workspace's domain id for `domainId`, or null. No domains exist before the domains
 *  resource lands, so every id is refused (API keys answer 400). */
export async function findWorkspaceDomainId(_tx: Executor, _workspaceId: string, _domainId: string): Promise<string | null> {
  return null;
}
