// The live preview of a form: drawn by the embed script's own code (its steps renderer and its
// stylesheet, in a shadow root of its own) inside a box that stands for the visitor's window,
// so each type looks as it will on a site: a popup over a dimmed page, a flyout in its corner,
// a banner at the top or bottom, a full-page form, an embedded form in the page's flow.
// Redrawn on every change; a visitor's submit here shows the success step and sends nothing.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Definition, Step } from '../../../../src/resources/forms/definition.ts';
import { h, StepsView } from '../../../../src/resources/forms/embed/form.ts';
import { applyStyles, CSS } from '../../../../src/resources/forms/embed/styles.ts';
import { Select } from '../ui';

// The embed's frames are fixed to the visitor's window; here the box is that window (the host
// is transformed, so fixed positions and percentages are the box's).
const FRAME = `
.p{max-height:100%}
.popup .p{width:min(var(--w,440px),calc(100% - 32px))}
.flyout .p{width:min(var(--w,380px),calc(100% - 32px))}
.page{padding:16px;color:#4b5563;font:14px system-ui,sans-serif}
.page i{display:block;height:10px;margin:10px 0;background:#e5e7eb;border-radius:4px}
`;

type Shown = 'form' | 'success';

function draw(root: ShadowRoot, type: string, definition: Partial<Definition>, shown: Shown): void {
  const styles = definition.styles;
  const steps = (Array.isArray(definition.steps) ? definition.steps : []).filter((s): s is Step => Boolean(s) && Array.isArray(s.blocks));
  const position = styles?.position ?? (type === 'banner' ? 'top' : 'bottom_right');
  const frame = h('div', { class: `r ${type} ${position}` });
  applyStyles(frame, styles);
  const body = h('div', { class: 'b' });
  const live = h('div', { class: 'sr', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
  const panel = h('div', { class: 'p', role: 'region', 'aria-label': `Preview: ${type.replace('_', ' ')} form` }, body, live);
  if (type !== 'embed') panel.append(h('span', { class: 'x', 'aria-hidden': 'true' }, '×'));
  // A stand-in for the site's page: an embedded form sits inside it, the others over it.
  const page = h('div', { class: 'page', 'aria-hidden': 'true' }, 'Your page', h('i'), h('i'), h('i'));
  if (type === 'popup' || type === 'full_page') frame.append(h('div', { class: 'o' }));
  frame.append(panel);
  if (type === 'embed') root.replaceChildren(h('style', {}, CSS + FRAME), h('div', { class: 'page' }, frame));
  else root.replaceChildren(h('style', {}, CSS + FRAME), page, frame);
  try {
    const view: StepsView = new StepsView(body, live, steps, {
      close: () => undefined,
      async submit() {
        view.showSuccess(undefined);
        return null;
      },
    });
    if (shown === 'success') view.showSuccess(undefined);
    if (view.headingId) panel.setAttribute('aria-labelledby', view.headingId);
  } catch {
    body.replaceChildren(h('p', {}, 'This definition cannot be drawn yet.'));
  }
}

export function FormPreview({ type, definition }: { type: string; definition: Partial<Definition> }) {
  const host = useRef<HTMLDivElement>(null);
  const [shown, setShown] = useState<Shown>('form');
  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const root = element.shadowRoot ?? element.attachShadow({ mode: 'open' });
    draw(root, type, definition, shown);
  }, [type, definition, shown]);
  return (
    <section aria-labelledby="form-preview-title" class="form-preview-section">
      <div class="toolbar">
        <h2 id="form-preview-title">Live preview</h2>
        <Select
          label="Step"
          value={shown}
          onChange={(v) => setShown(v as Shown)}
          options={[
            ['form', 'Form'],
            ['success', 'Success'],
          ]}
        />
      </div>
      <div ref={host} class={`form-preview-window ${type}`} data-form-preview={type} />
      <p class="hint">As a visitor sees it. Submitting here shows the success step and sends nothing.</p>
    </section>
  );
}
