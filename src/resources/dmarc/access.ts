// Who may see and send a domain's DMARC reports: Pro plans and up (403
// plan_required otherwise), for a domain of their own workspace (404 otherwise).
import type { Executor } from '../../platform/db/database.ts';
import { plainError, planRequiredError } from '../../platform/http/errors.ts';
import { findDomain } from '../domains/service.ts';
import { getWorkspace } from '../workspaces/service.ts';

export interface ReportDomain {
  id: string;
  name: string;
  collecting: boolean;
}

export const COLLECTION_OFF = 'DMARC report collection is off for this domain: turn on dmarc_reports first';

export async function reportDomain(db: Executor, workspaceId: string, idOrName: string): Promise<ReportDomain> {
  const workspace = await getWorkspace(db, workspaceId);
  if (!workspace) throw plainError(404, 'Workspace not found');
  if (workspace.plan === 'payg') throw planRequiredError('pro', 'DMARC reports are available on the Pro, Business and Custom plans');
  const row = await findDomain(db, workspaceId, idOrName);
  return { id: row.id, name: row.name, collecting: row.dmarc_reports === 1 };
}

/** A domain that collects reports now: uploads for one that does not are refused (422), as mail is. */
export async function collectingDomain(db: Executor, workspaceId: string, idOrName: string): Promise<ReportDomain> {
  const domain = await reportDomain(db, workspaceId, idOrName);
  if (!domain.collecting) throw plainError(422, COLLECTION_OFF);
  return domain;
}
