// The frame a form appears in, by type: `popup` and `full_page` are modal dialogs
// (role="dialog", aria-modal, focus moved in and trapped, Escape and the close button close
// them, focus returns where it was); `flyout` is a non-modal dialog in a corner, `banner` a
// labelled region at the top or bottom, `embed` a region inside the element that placed it.
// Each lives in a shadow root of its own.
import type { Styles } from '../definition.ts';
import { h } from './form.ts';
import { applyStyles, CSS } from './styles.ts';

const FOCUSABLE =
  'a[href],button:not([disabled]),input:not([disabled]):not([tabindex="-1"]),select:not([disabled]),[tabindex]:not([tabindex="-1"])';

export class Shell {
  readonly host: HTMLElement;
  readonly body: HTMLElement;
  readonly live: HTMLElement;
  private readonly panel: HTMLElement;
  private readonly modal: boolean;
  private readonly onClosed: () => void;
  private previous: HTMLElement | null = null;
  private overflow = '';
  private readonly guard = (event: FocusEvent) => {
    // Focus that left a modal dialog (a click on the page behind) is brought back.
    if (event.target !== this.host) this.focusables()[0]?.focus();
  };

  constructor(type: string, styles: Styles | undefined, onClosed: () => void) {
    this.modal = type === 'popup' || type === 'full_page';
    this.onClosed = onClosed;
    this.host = h('div', { 'data-postlane': type });
    const shadow = this.host.attachShadow({ mode: 'open' });
    const position = styles?.position ?? (type === 'banner' ? 'top' : 'bottom_right');
    const root = h('div', { class: `r ${type} ${position}` });
    applyStyles(root, styles);
    this.body = h('div', { class: 'b' });
    // Errors and progress are announced from here (a polite region keeps focus where it is).
    this.live = h('div', { class: 'sr', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
    const role = type === 'banner' || type === 'embed' ? 'region' : 'dialog';
    this.panel = h(
      'div',
      { class: 'p', role, 'aria-modal': role === 'dialog' ? String(this.modal) : undefined, 'aria-label': 'Sign-up form' },
      this.body,
      this.live,
    );
    if (type !== 'embed') {
      const close = h('button', { class: 'x', type: 'button', 'aria-label': 'Close' }, '×');
      close.addEventListener('click', () => this.close());
      // Last in the tab order: a visitor meets the fields first (it shows in the top corner).
      this.panel.append(close);
    }
    this.panel.addEventListener('keydown', (event) => this.onKey(event));
    if (this.modal) {
      const overlay = h('div', { class: 'o' });
      overlay.addEventListener('click', () => this.close());
      root.append(overlay);
    }
    root.append(this.panel);
    shadow.append(h('style', {}, CSS), root);
  }

  /** Names the frame after the form's heading; the generic label stays for a step without one. */
  labelledBy(headingId: string | undefined): void {
    if (headingId) this.panel.setAttribute('aria-labelledby', headingId);
  }

  open(mount: HTMLElement = document.body): void {
    const active = document.activeElement;
    this.previous = active instanceof HTMLElement ? active : null;
    mount.append(this.host);
    if (!this.modal) return;
    this.overflow = document.documentElement.style.overflow;
    document.documentElement.style.overflow = 'hidden';
    document.addEventListener('focusin', this.guard);
    this.focusables()[0]?.focus();
  }

  close(): void {
    if (!this.host.isConnected) return;
    this.host.remove();
    if (this.modal) {
      document.documentElement.style.overflow = this.overflow;
      document.removeEventListener('focusin', this.guard);
    }
    if (this.modal || document.activeElement === document.body) this.previous?.focus();
    this.onClosed();
  }

  /** What Tab reaches in the panel, in tab order. */
  private focusables(): HTMLElement[] {
    return [...this.panel.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((element) => !element.closest('[hidden]'));
  }

  private onKey(event: KeyboardEvent): void {
    if (event.key === 'Escape' && this.host.dataset.postlane !== 'embed') {
      event.preventDefault();
      this.close();
      return;
    }
    if (event.key !== 'Tab' || !this.modal) return;
    const list = this.focusables();
    if (list.length === 0) return;
    const active = this.host.shadowRoot!.activeElement;
    const index = list.indexOf(active as HTMLElement);
    const target = event.shiftKey
      ? index <= 0
        ? list[list.length - 1]
        : null
      : index === list.length - 1 || index === -1
        ? list[0]
        : null;
    if (target) {
      event.preventDefault();
      target.focus();
    }
  }
}
