// The Delete button of a detail page or a table row: asks first (the browser's own confirm),
// deletes through the page's action (whose busy flag and error the page shows), then either
// goes to `done` (a path: back to the list) or calls it (a row: reload the list).
import type { useAction } from '../lib/hooks';
import { navigate } from '../lib/router';
import { Button } from './ui';

export interface DeleteButtonProps {
  action: ReturnType<typeof useAction>;
  /** The confirm question, e.g. "Delete example.com?". */
  question: string;
  remove: () => Promise<unknown>;
  done: string | (() => unknown);
  /** In a table row: the button is small and its name says which row, "Delete <what>". */
  what?: string;
}

export function DeleteButton({ action, question, remove, done, what }: DeleteButtonProps) {
  return (
    <Button
      class={what !== undefined ? 'small' : undefined}
      kind="danger"
      aria-label={what !== undefined ? `Delete ${what}` : undefined}
      busy={action.busy}
      onClick={async () => {
        if (!confirm(question)) return;
        if (!(await action.run(remove))) return;
        if (typeof done === 'string') navigate(done);
        else await done();
      }}
    >
      Delete
    </Button>
  );
}
