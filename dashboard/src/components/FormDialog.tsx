// A dialog holding one form: its fields, then the action's error in the API's words and the
// submit button, busy while the action runs. The browser's own submit (Enter, required fields)
// stays; `onSubmit` runs with the page reload already prevented.
import type { ComponentChildren } from 'preact';
import type { useAction } from '../lib/hooks';
import { Button, Dialog, ErrorBox } from './ui';

export interface FormDialogProps {
  title: string;
  open: boolean;
  onClose: () => void;
  action: ReturnType<typeof useAction>;
  /** The submit button's words. */
  submit: string;
  onSubmit: () => Promise<unknown>;
  children: ComponentChildren;
}

export function FormDialog({ title, open, onClose, action, submit, onSubmit, children }: FormDialogProps) {
  return (
    <Dialog title={title} open={open} onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          await onSubmit();
        }}
      >
        {children}
        <ErrorBox error={action.error} />
        <Button type="submit" kind="primary" busy={action.busy}>
          {submit}
        </Button>
      </form>
    </Dialog>
  );
}
