// A form's steps as accessible HTML: every block type, real labels (fieldsets and legends for
// groups), errors tied to their field and announced through a live region, the `next`,
// `submit`, `close` and `go_to_url` actions, and the honeypot field people never see. Text
// from the definition is only ever set as text, never parsed as HTML.
import { isInput, optionOf, type Block, type InputBlock, type Step } from '../definition.ts';

export interface FormActions {
  close(): void;
  /** Sends the values; resolves to field errors from the server, or null once accepted. */
  submit(values: Record<string, unknown>, honeypot: string): Promise<Record<string, string[]> | null>;
}

let uid = 0;
const nextId = (what: string) => `pl-${what}-${++uid}`;

type Attributes = Record<string, string | boolean | undefined>;

export function h(tag: string, attributes: Attributes = {}, ...children: Array<Node | string>): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === true) element.setAttribute(name, '');
    else if (typeof value === 'string') element.setAttribute(name, value);
  }
  element.append(...children);
  return element;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[0-9\s().-]{4,30}$/;

interface Field {
  input: InputBlock;
  container: HTMLElement;
  error: HTMLElement;
  controls: Array<HTMLInputElement | HTMLSelectElement>;
}

function value(field: Field): unknown {
  const { input, controls } = field;
  if (input.type === 'checkbox') {
    if (!input.options) return (controls[0] as HTMLInputElement).checked;
    return controls.filter((c) => (c as HTMLInputElement).checked).map((c) => c.value);
  }
  if (input.type === 'radio') return controls.find((c) => (c as HTMLInputElement).checked)?.value ?? '';
  return controls[0].value.trim();
}

function localError(field: Field): string | null {
  const v = value(field);
  const empty = v === '' || v === false || (Array.isArray(v) && v.length === 0);
  if (empty) return field.input.required ? 'This field is required' : null;
  if (field.input.type === 'email' && !EMAIL.test(v as string)) return 'Enter a valid email address';
  if (field.input.type === 'phone' && !PHONE.test(v as string)) return 'Enter a valid phone number';
  return null;
}

function renderInput(input: InputBlock): Field {
  const id = nextId('f');
  const errorId = `${id}-error`;
  const error = h('p', { id: errorId, class: 'e', hidden: true });
  const required = input.required ? true : undefined;
  const marker = () => (input.required ? [h('span', { 'aria-hidden': 'true' }, ' *')] : []);
  const options = (input.options ?? []).map(optionOf);
  const choices = (type: 'radio' | 'checkbox') => {
    const controls = options.map(
      (option) =>
        h('input', {
          type,
          name: `${id}-${input.name}`,
          value: option.value,
          required: type === 'radio' ? required : undefined,
        }) as HTMLInputElement,
    );
    const container = h(
      'fieldset',
      { class: 'fl', 'aria-describedby': errorId },
      h('legend', {}, input.label, ...marker()),
      ...controls.map((control, i) => h('label', { class: 'ch' }, control, options[i].label)),
      error,
    );
    return { input, container, error, controls };
  };
  if (input.type === 'radio' || (input.type === 'checkbox' && options.length > 0)) return choices(input.type);
  if (input.type === 'checkbox') {
    const control = h('input', { id, type: 'checkbox', name: input.name, required, 'aria-describedby': errorId }) as HTMLInputElement;
    return {
      input,
      container: h('div', { class: 'fl ch' }, control, h('label', { for: id }, input.label, ...marker()), error),
      error,
      controls: [control],
    };
  }
  let control: HTMLInputElement | HTMLSelectElement;
  if (input.type === 'dropdown') {
    control = h(
      'select',
      { id, name: input.name, required, 'aria-describedby': errorId },
      h('option', { value: '' }, input.placeholder ?? 'Choose…'),
      ...options.map((o) => h('option', { value: o.value }, o.label)),
    ) as HTMLSelectElement;
  } else {
    const kinds: Record<string, [string, string | undefined]> = {
      email: ['email', 'email'],
      phone: ['tel', 'tel'],
      date: ['date', undefined],
      text_input: ['text', undefined],
    };
    const [type, autocomplete] = kinds[input.type];
    control = h('input', {
      id,
      type,
      name: input.name,
      required,
      autocomplete,
      placeholder: input.placeholder,
      'aria-describedby': errorId,
    }) as HTMLInputElement;
  }
  return {
    input,
    container: h('div', { class: 'fl' }, h('label', { for: id }, input.label, ...marker()), control, error),
    error,
    controls: [control],
  };
}

/** Renders the form steps into `body` and runs them; `live` announces errors and progress. */
export class StepsView {
  private readonly body: HTMLElement;
  private readonly live: HTMLElement;
  private readonly actions: FormActions;
  private readonly fields = new Map<string, Field>();
  private readonly forms: HTMLFormElement[] = [];
  private readonly successSteps: Step[];
  private readonly honeypot: HTMLInputElement;
  private current = 0;
  private busy = false;
  /** The heading that names the dialog (the first heading of the first step). */
  readonly headingId: string | undefined;

  constructor(body: HTMLElement, live: HTMLElement, steps: Step[], actions: FormActions) {
    this.body = body;
    this.live = live;
    this.actions = actions;
    this.successSteps = steps.filter((s) => s.kind === 'success');
    this.honeypot = h('input', { type: 'text', name: 'website', tabindex: '-1', autocomplete: 'off' }) as HTMLInputElement;
    let headingId: string | undefined;
    for (const step of steps.filter((s) => s.kind === 'form')) {
      const form = h('form', { novalidate: true, hidden: this.forms.length > 0 }) as HTMLFormElement;
      for (const block of step.blocks) {
        const element = this.renderBlock(block);
        if (!headingId && element.tagName === 'H2') headingId = element.id = nextId('h');
        form.append(element);
      }
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null;
        if (submitter?.dataset.action === 'next' || !form.querySelector('[data-action=submit]')) this.next();
        else void this.send();
      });
      this.forms.push(form);
    }
    // The honeypot: off screen and out of the tab order; people leave it empty, naive bots fill it.
    this.forms[0]?.append(h('div', { class: 'hp', 'aria-hidden': 'true' }, h('label', {}, 'Leave this field empty', this.honeypot)));
    this.headingId = headingId;
    body.append(...this.forms);
  }

  private renderBlock(block: Block): HTMLElement {
    if (isInput(block)) {
      const field = renderInput(block);
      this.fields.set(block.name, field);
      return field.container;
    }
    switch (block.type) {
      case 'text':
        return h(block.level === 'heading' ? 'h2' : 'p', {}, block.content);
      case 'image': {
        const image = h('img', { src: block.src, alt: block.alt });
        return block.href ? h('a', { href: block.href, target: '_blank', rel: 'noopener' }, image) : image;
      }
      default: {
        if (block.action === 'go_to_url')
          return h(
            'a',
            { class: 'btn', href: block.url, target: block.new_tab ? '_blank' : undefined, rel: block.new_tab ? 'noopener' : undefined },
            block.label,
          );
        const type = block.action === 'submit' || block.action === 'next' ? 'submit' : 'button';
        const button = h('button', { class: 'btn', type, 'data-action': block.action }, block.label);
        if (block.action === 'close') button.addEventListener('click', () => this.actions.close());
        return button;
      }
    }
  }

  private fieldsOf(form: HTMLFormElement): Field[] {
    return [...this.fields.values()].filter((field) => form.contains(field.container));
  }

  private showErrors(fields: Field[], errors: Record<string, string[]>): boolean {
    let first: Field | undefined;
    for (const field of fields) {
      const message = errors[field.input.name]?.[0];
      field.error.textContent = message ?? '';
      field.error.hidden = !message;
      for (const control of field.controls) {
        if (message) control.setAttribute('aria-invalid', 'true');
        else control.removeAttribute('aria-invalid');
      }
      if (message && !first) first = field;
    }
    if (!first) return false;
    const count = Object.keys(errors).length;
    this.announce(
      `${count === 1 ? 'One field needs' : `${count} fields need`} attention: ${first.input.label}: ${errors[first.input.name][0]}`,
    );
    first.controls[0].focus();
    return true;
  }

  private checkStep(form: HTMLFormElement): boolean {
    const errors: Record<string, string[]> = {};
    for (const field of this.fieldsOf(form)) {
      const message = localError(field);
      if (message) errors[field.input.name] = [message];
    }
    return !this.showErrors(this.fieldsOf(form), errors);
  }

  announce(message: string): void {
    // Cleared first, so the same message twice is announced twice.
    this.live.textContent = '';
    setTimeout(() => (this.live.textContent = message), 50);
  }

  private showForm(index: number): void {
    this.forms.forEach((form, i) => (form.hidden = i !== index));
    this.current = index;
    const target = this.forms[index].querySelector<HTMLElement>('input:not([tabindex="-1"]),select,button');
    target?.focus();
  }

  private next(): void {
    if (!this.checkStep(this.forms[this.current])) return;
    if (this.current + 1 < this.forms.length) this.showForm(this.current + 1);
    else void this.send();
  }

  private async send(): Promise<void> {
    const form = this.forms[this.current];
    if (this.busy || !this.checkStep(form)) return;
    this.busy = true;
    form.setAttribute('aria-busy', 'true');
    this.announce('Sending…');
    const values: Record<string, unknown> = {};
    for (const [name, field] of this.fields) values[name] = value(field);
    try {
      const errors = await this.actions.submit(values, this.honeypot.value);
      if (errors) {
        // Back to the first step holding a refused field.
        const index = this.forms.findIndex((f) => this.fieldsOf(f).some((field) => errors[field.input.name]));
        if (index >= 0 && index !== this.current) this.showForm(index);
        this.showErrors(this.fieldsOf(this.forms[Math.max(index, 0)]), errors);
      }
    } catch {
      this.announce('Sorry, something went wrong. Please try again in a moment.');
    } finally {
      this.busy = false;
      form.removeAttribute('aria-busy');
    }
  }

  /** Replaces the form with the success step (the server's, else the definition's). */
  showSuccess(step: Step | undefined): void {
    const success = step ?? this.successSteps[0];
    const container = h('div', { tabindex: '-1', class: 'ok' });
    for (const block of success?.blocks ?? []) container.append(this.renderBlock(block));
    // Its heading now names the dialog.
    const heading = container.querySelector('h2');
    if (heading && this.headingId) heading.id = this.headingId;
    this.body.replaceChildren(container);
    this.announce(container.textContent ?? '');
    container.focus();
  }
}
