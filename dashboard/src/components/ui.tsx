// The small parts every page is built from: loading and error states, badges, copy buttons,
// paging, search boxes, dialogs and form fields. All keyboard-usable and labelled.
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

export function ErrorBox({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

const TONES: Record<string, string> = {
  delivered: 'good',
  verified: 'good',
  ok: 'good',
  active: 'good',
  published: 'good',
  loaded: 'good',
  clicked: 'good',
  received: 'good',
  enabled: 'good',
  accepted: 'info',
  scheduled: 'info',
  pending: 'info',
  retrying: 'warn',
  attempted: 'warn',
  held: 'warn',
  partially_verified: 'warn',
  draft: 'info',
  bounced: 'bad',
  failed: 'bad',
  permanent: 'bad',
  temporary: 'warn',
  deferred: 'warn',
  error: 'bad',
  rejected: 'bad',
  complained: 'bad',
  suppressed: 'bad',
  canceled: 'muted',
  disabled: 'muted',
  missing: 'bad',
  invalid: 'bad',
  subscribed: 'good',
  unsubscribed: 'muted',
  live: 'good',
  processing: 'info',
  completed: 'good',
  processed: 'good',
  duplicate: 'muted',
  safe: 'good',
  role: 'warn',
  catch_all: 'warn',
  unknown: 'muted',
  inbox_full: 'warn',
  disposable: 'bad',
  pass: 'good',
  fail: 'bad',
};

export function Badge({ value }: { value: string | null | undefined }) {
  const text = value ?? 'unknown';
  return <span class={`badge ${TONES[text] ?? 'muted'}`}>{text.replace(/_/g, ' ')}</span>;
}

/** Copies `text`; `what` (read by screen readers only) says what is copied. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <button
      type="button"
      class="small"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setCopied('copied');
        } catch {
          setCopied('failed');
        }
        setTimeout(() => setCopied('idle'), 2000);
      }}
    >
      <span aria-live="polite">{copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Copy failed' : 'Copy'}</span>
      <span class="visually-hidden"> {what}</span>
    </button>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Postlane`;
  }, [title]);
  return (
    <div class="page-header">
      <h1>{title}</h1>
      {children ? <div class="actions">{children}</div> : null}
    </div>
  );
}

/** A table (focusable, so the keyboard can scroll it). On a phone each row becomes a card with
 *  every cell under its column's name (styles.css), so no column hides off-screen: the names are
 *  copied from the header into each cell's `data-label` after every render, rows added later too. */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const table = ref.current?.querySelector('table');
    if (!table) return;
    const names = [...table.querySelectorAll('thead th')].map((th) => th.textContent?.trim() ?? '');
    for (const row of table.querySelectorAll('tbody tr')) {
      [...row.children].forEach((cell, i) => {
        if (names[i] && cell.getAttribute('data-label') !== names[i]) cell.setAttribute('data-label', names[i]);
      });
    }
  });
  return (
    <div class="table-scroll" role="region" aria-label={label} tabIndex={0} ref={ref}>
      <table>{children}</table>
    </div>
  );
}

export function Pager({
  page,
  hasNext,
  onPage,
  loading,
}: {
  page: number;
  hasNext: boolean;
  onPage: (page: number) => void;
  loading?: boolean;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1 || loading} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span aria-live="polite">Page {page}</span>
      <button type="button" disabled={!hasNext || loading} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

export function SearchBox({ value, onInput, label = 'Search' }: { value: string; onInput: (value: string) => void; label?: string }) {
  return (
    <label class="search">
      <span class="visually-hidden">{label}</span>
      <input type="search" placeholder={label} value={value} onInput={(e) => onInput((e.target as HTMLInputElement).value)} />
    </label>
  );
}

export function Field({ label, hint, children }: { label: string; hint?: string; children: ComponentChildren }) {
  // The hint stays outside the label, so the field's name is the label alone.
  return (
    <div class="field">
      <label>
        <span class="label">{label}</span>
        {children}
      </label>
      {hint ? <span class="hint">{hint}</span> : null}
    </div>
  );
}

export function Select({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: Array<[string, string]>;
  onChange: (value: string) => void;
}) {
  return (
    <label class="field inline">
      <span class="label">{label}</span>
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {options.map(([v, text]) => (
          <option value={v}>{text}</option>
        ))}
      </select>
    </label>
  );
}

/** A modal dialog (the browser's own: focus stays inside, Escape closes it). */
export function Dialog({
  title,
  open,
  onClose,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // A layout effect: the modal opens and closes in the same render as `open` changes. An effect
  // runs after the next frame, and until then a closed dialog's page stayed inert: what was
  // typed right after Close went nowhere (seen in the campaign page's test under load).
  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onClose={onClose} onCancel={onClose}>
      {open ? (
        <>
          <div class="dialog-head">
            <h2 id="dialog-title">{title}</h2>
            <button type="button" class="small" onClick={onClose}>
              Close
            </button>
          </div>
          {children}
        </>
      ) : null}
    </dialog>
  );
}

export function Button(props: ButtonHTMLAttributes<HTMLButtonElement> & { busy?: boolean; kind?: 'primary' | 'danger' | 'plain' }) {
  const { busy, kind = 'plain', children, disabled, ...rest } = props;
  return (
    <button
      type="button"
      {...rest}
      class={`${kind} ${(rest.class as string) ?? ''}`}
      disabled={Boolean(disabled) || busy}
      aria-busy={busy ? 'true' : undefined}
    >
      {busy ? <span class="spinner" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}

/** A definition list of label/value pairs. */
export function Facts({ items }: { items: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="facts">
      {items.map(([label, value]) => (
        <div>
          <dt>{label}</dt>
          <dd>{value ?? '—'}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A labelled progress bar; without `value` it says the work goes on without a known end. */
export function Progress({ label, value, text }: { label: string; value?: number; text: string }) {
  return (
    <div class="progress">
      <span class="label" id={`progress-${label.replace(/\W+/g, '-')}`}>
        {label}
      </span>
      <progress aria-labelledby={`progress-${label.replace(/\W+/g, '-')}`} max={1} value={value} />
      <span class="small-text" role="status">
        {text}
      </span>
    </div>
  );
}
