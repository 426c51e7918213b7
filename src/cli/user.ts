// `postlane user create --email E --workspace WSP [--role admin|member]`: a dashboard user in a
// workspace, with a one-time link to set the password (none when the user already has one).
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { ApiError } from '../platform/http/errors.ts';
import { createUser } from '../resources/users/service.ts';
import { UsageError } from './usage-error.ts';
import { withDatabase } from './workspace.ts';

export async function userCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'create') throw new UsageError('user takes create');
  const { values } = parseArgs({
    args: rest,
    options: {
      email: { type: 'string' },
      workspace: { type: 'string' },
      role: { type: 'string', default: 'member' },
      json: { type: 'boolean' },
    },
  });
  if (!values.email) throw new UsageError('--email is required');
  if (!values.workspace) throw new UsageError('--workspace is required');
  let created;
  try {
    created = await withDatabase((db) =>
      createUser(db, { email: values.email!, workspaceId: values.workspace!, role: values.role! }, loadConfig().publicUrl),
    );
  } catch (error) {
    if (error instanceof ApiError) throw new UsageError(error.message);
    throw error;
  }
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ user: created.user, workspace_id: values.workspace, role: created.role, password_link: created.url })}\n`,
    );
  } else {
    process.stdout.write(
      `User ${created.user.email} (${created.user.id}) is ${created.role === 'admin' ? 'an admin' : 'a member'} of ${values.workspace}.\n` +
        (created.url ? `Link to set the password (works once, for 7 days):\n\n  ${created.url}\n` : 'They already have a password.\n'),
    );
  }
  return 0;
}
