// Notices to a workspace's owners (its members' account emails) about something that needs their
// attention, such as a failing webhook (https://emailit.com/docs/webhooks/retries-and-failures.md).
// A notice is queued as one job per recipient inside the caller's transaction, so it exists exactly
// when the change it reports does; the worker sends it from the service's own address.
import type { Executor } from '../../platform/db/database.ts';
import { enqueueJob } from '../../platform/jobs.ts';
import { getWorkspace } from '../workspaces/service.ts';

export const NOTIFY_JOB = 'workspace.notify';

export interface Notice {
  subject: string;
  /** Plain text body; a greeting naming the workspace is added. */
  text: string;
}

export interface NotifyPayload {
  to: string;
  subject: string;
  text: string;
}

/** Queues `notice` for every member of the workspace; how many were queued (0 without members). */
export async function notifyWorkspaceOwners(tx: Executor, workspaceId: string, notice: Notice): Promise<number> {
  const workspace = await getWorkspace(tx, workspaceId);
  if (!workspace) return 0;
  const text = `Hello,\n\nthis is about your Postlane workspace "${workspace.name}".\n\n${notice.text}\n`;
  for (const to of workspace.members) {
    const payload: NotifyPayload = { to, subject: notice.subject, text };
    await enqueueJob(tx, NOTIFY_JOB, payload, { maxAttempts: 20 });
  }
  return workspace.members.length;
}
