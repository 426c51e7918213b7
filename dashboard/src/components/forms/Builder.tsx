// The form builder: the steps of a form's definition as lists of blocks (the input types the
// API knows, text, buttons, images), each added, removed, moved up or down and edited (label,
// name, placeholder, required, options …), and the settings of the form's type (its look, its
// position, and for the types shown over a page: when and to whom). It edits a definition
// object handed in and back (the page keeps it, the JSON tab edits the same one).
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  BUTTON_ACTIONS,
  FREQUENCY_MODES,
  INPUT_TYPES,
  isInput,
  optionOf,
  type Block,
  type Definition,
  type InputBlock,
  type Step,
  type Styles,
  type Targeting,
} from '../../../../src/resources/forms/definition.ts';
import { Button, Field, Select } from '../ui';

export type Draft = Definition & Record<string, unknown>;

export const BLOCK_NAMES: Record<string, string> = {
  email: 'Email address',
  text_input: 'Text',
  phone: 'Phone number',
  date: 'Date',
  radio: 'Choice (radio buttons)',
  checkbox: 'Checkbox',
  dropdown: 'Dropdown',
  text: 'Text or heading',
  button: 'Button',
  image: 'Image',
};
const ACTION_NAMES: Record<string, string> = { submit: 'Submit the form', next: 'Next step', close: 'Close', go_to_url: 'Go to a URL' };
const FREQUENCY_NAMES: Record<string, string> = {
  always: 'Every visit',
  once_per_session: 'Once per session',
  once: 'Once',
  every_n_days: 'Every few days',
};
const WITH_OPTIONS = ['radio', 'checkbox', 'dropdown'];

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+|_+$/g, '')
    .slice(0, 64);

function uniqueName(steps: Step[], wanted: string, except?: string): string {
  const taken = new Set(
    steps.flatMap((s) =>
      s.blocks
        .filter(isInput)
        .filter((b) => b.id !== except)
        .map((b) => b.name),
    ),
  );
  const base = wanted || 'field';
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}_${i}`;
  return name;
}

function uniqueId(steps: Step[], base: string): string {
  const taken = new Set(steps.flatMap((s) => [s.id, ...s.blocks.map((b) => b.id)]));
  let id = base;
  for (let i = 2; taken.has(id); i++) id = `${base}-${i}`;
  return id;
}

function newBlock(type: string, steps: Step[]): Block {
  const id = uniqueId(steps, type.replace('_', '-'));
  if (type === 'text') return { id, type: 'text', level: 'paragraph', content: 'Some text' };
  if (type === 'button') return { id, type: 'button', label: 'Close', action: 'close' };
  if (type === 'image') return { id, type: 'image', src: 'https://', alt: '' };
  const label = BLOCK_NAMES[type].replace(/ \(.*\)$/, '');
  const block: InputBlock = { id, type: type as InputBlock['type'], name: uniqueName(steps, slug(label)), label };
  if (WITH_OPTIONS.includes(type) && type !== 'checkbox') block.options = ['First', 'Second'];
  return block;
}

const numberOrUndefined = (text: string) => (text.trim() === '' || Number.isNaN(Number(text)) ? undefined : Number(text));
/** An object without its undefined and empty-string values (an empty setting is the default). */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== '')) as T;
}

interface BlockEditorProps {
  block: Block;
  index: number;
  count: number;
  steps: Step[];
  onChange: (block: Block) => void;
  onMove: (delta: number) => void;
  onRemove: () => void;
}

function BlockEditor({ block, index, count, steps, onChange, onMove, onRemove }: BlockEditorProps) {
  const set = (patch: Record<string, unknown>) => onChange(compact({ ...block, ...patch }) as Block);
  const text = (key: string) => (e: Event) => set({ [key]: (e.target as HTMLInputElement).value });
  const title = isInput(block)
    ? block.label
    : block.type === 'text'
      ? block.content
      : block.type === 'button'
        ? block.label
        : block.alt || 'Image';
  const name = `${index + 1}. ${BLOCK_NAMES[block.type] ?? block.type}: ${String(title ?? '').slice(0, 40)}`;
  return (
    <li class="builder-block" data-block={block.id}>
      <fieldset class="group">
        <legend>{name}</legend>
        <div class="builder-fields">
          {isInput(block) ? (
            <>
              <Field label="Label">
                <input
                  value={block.label}
                  onInput={(e) => {
                    const label = (e.target as HTMLInputElement).value;
                    // The name follows the label while it is the one the label gave it.
                    const followed = block.name === uniqueName(steps, slug(block.label), block.id);
                    set({ label, ...(followed && slug(label) ? { name: uniqueName(steps, slug(label), block.id) } : {}) });
                  }}
                />
              </Field>
              <Field label="Name" hint="The key of the value in submissions">
                <input value={block.name} spellcheck={false} onInput={text('name')} />
              </Field>
              {block.type !== 'radio' && block.type !== 'checkbox' ? (
                <Field label={block.type === 'dropdown' ? 'Empty choice text' : 'Placeholder'}>
                  <input value={block.placeholder ?? ''} onInput={text('placeholder')} />
                </Field>
              ) : null}
              {WITH_OPTIONS.includes(block.type) ? (
                <Field label="Options" hint={block.type === 'checkbox' ? 'One per line; none for a single box' : 'One per line'}>
                  <textarea
                    rows={3}
                    value={(block.options ?? []).map((o) => optionOf(o).label).join('\n')}
                    onInput={(e) => {
                      const lines = (e.target as HTMLTextAreaElement).value.split('\n');
                      set({ options: lines.length === 1 && lines[0] === '' ? undefined : lines });
                    }}
                  />
                </Field>
              ) : null}
              <label class="check">
                <input
                  type="checkbox"
                  checked={Boolean(block.required)}
                  onChange={(e) => set({ required: (e.target as HTMLInputElement).checked || undefined })}
                />{' '}
                Required
              </label>
            </>
          ) : null}
          {block.type === 'text' ? (
            <>
              <Field label="Text">
                <textarea rows={2} value={block.content} onInput={text('content')} />
              </Field>
              <Select
                label="Shown as"
                value={block.level ?? 'paragraph'}
                onChange={(level) => set({ level })}
                options={[
                  ['heading', 'Heading'],
                  ['paragraph', 'Paragraph'],
                ]}
              />
            </>
          ) : null}
          {block.type === 'button' ? (
            <>
              <Field label="Button text">
                <input value={block.label} onInput={text('label')} />
              </Field>
              <Select
                label="Action"
                value={block.action}
                onChange={(action) => set({ action, url: action === 'go_to_url' ? (block.url ?? 'https://') : undefined })}
                options={BUTTON_ACTIONS.map((a): [string, string] => [a, ACTION_NAMES[a]])}
              />
              {block.action === 'go_to_url' ? (
                <Field label="URL">
                  <input type="url" value={block.url ?? ''} onInput={text('url')} />
                </Field>
              ) : null}
            </>
          ) : null}
          {block.type === 'image' ? (
            <>
              <Field label="Image URL">
                <input type="url" value={block.src} onInput={text('src')} />
              </Field>
              <Field label="Description" hint="Empty for a decorative image">
                <input value={block.alt} onInput={(e) => onChange({ ...block, alt: (e.target as HTMLInputElement).value })} />
              </Field>
            </>
          ) : null}
        </div>
        <div class="row-actions">
          <Button class="small" data-move="up" disabled={index === 0} onClick={() => onMove(-1)}>
            Move up<span class="visually-hidden"> {name}</span>
          </Button>
          <Button class="small" data-move="down" disabled={index === count - 1} onClick={() => onMove(1)}>
            Move down<span class="visually-hidden"> {name}</span>
          </Button>
          <Button class="small" kind="danger" onClick={onRemove}>
            Remove<span class="visually-hidden"> {name}</span>
          </Button>
        </div>
      </fieldset>
    </li>
  );
}

function StepEditor({
  step,
  steps,
  onChange,
  onRemove,
}: {
  step: Step;
  steps: Step[];
  onChange: (step: Step) => void;
  onRemove?: () => void;
}) {
  const choices = step.kind === 'form' ? [...INPUT_TYPES, 'text', 'button', 'image'] : ['text', 'button', 'image'];
  const [adding, setAdding] = useState<string>(choices[0]);
  // After a move, the focus follows the block to its new place (keyboard users keep their place).
  // After a removal, it goes to the block that took its place (or to the step's "new block").
  const focusAfter = useRef<{ id: string; move: string } | { removedAt: number } | null>(null);
  const section = useRef<HTMLElement>(null);
  useEffect(() => {
    const want = focusAfter.current;
    if (!want) return;
    focusAfter.current = null;
    if ('removedAt' in want) {
      const rest = section.current?.querySelectorAll<HTMLElement>('.builder-block');
      const next = rest?.[Math.min(want.removedAt, rest.length - 1)];
      (
        next?.querySelector<HTMLElement>('input, textarea, select') ?? section.current?.querySelector<HTMLElement>('.inline-form select')
      )?.focus();
      return;
    }
    const button = document.querySelector<HTMLButtonElement>(`[data-block="${want.id}"] [data-move="${want.move}"]`);
    (button && !button.disabled
      ? button
      : document.querySelector<HTMLButtonElement>(`[data-block="${want.id}"] [data-move]:not([disabled])`)
    )?.focus();
  });
  const blocks = step.blocks;
  const title = `${step.kind === 'form' ? 'Form step' : 'Success step'}: ${step.name ?? step.id}`;
  return (
    <section class="builder-step" aria-label={title} ref={section}>
      <div class="toolbar">
        <h2>{title}</h2>
        {onRemove ? (
          <Button class="small" kind="danger" onClick={onRemove}>
            Remove step<span class="visually-hidden"> {step.name ?? step.id}</span>
          </Button>
        ) : null}
      </div>
      <ol class="builder-blocks">
        {blocks.map((block, i) => (
          <BlockEditor
            key={block.id}
            block={block}
            index={i}
            count={blocks.length}
            steps={steps}
            onChange={(next) => onChange({ ...step, blocks: blocks.map((b) => (b === block ? next : b)) })}
            onMove={(delta) => {
              const next = [...blocks];
              next.splice(i, 1);
              next.splice(i + delta, 0, block);
              focusAfter.current = { id: block.id, move: delta < 0 ? 'up' : 'down' };
              onChange({ ...step, blocks: next });
            }}
            onRemove={() => {
              focusAfter.current = { removedAt: i };
              onChange({ ...step, blocks: blocks.filter((b) => b !== block) });
            }}
          />
        ))}
        {blocks.length === 0 ? <li class="muted">No blocks: add one.</li> : null}
      </ol>
      <div class="inline-form">
        <Select
          label={`New block in ${step.name ?? step.id}`}
          value={adding}
          onChange={setAdding}
          options={choices.map((t): [string, string] => [t, BLOCK_NAMES[t]])}
        />
        <Button
          onClick={() => {
            const block = newBlock(adding, steps);
            // Inputs go before the step's first button, where a visitor fills them in.
            const at = isInput(block) ? blocks.findIndex((b) => b.type === 'button') : -1;
            const next = [...blocks];
            next.splice(at < 0 ? next.length : at, 0, block);
            onChange({ ...step, blocks: next });
          }}
        >
          Add block<span class="visually-hidden"> to {step.name ?? step.id}</span>
        </Button>
      </div>
    </section>
  );
}

/** The settings of the form's type: its look and place, and when the floating types appear. */
function TypeSettings({ type, draft, onChange }: { type: string; draft: Draft; onChange: (draft: Draft) => void }) {
  const styles: Styles = draft.styles ?? {};
  const targeting: Targeting = draft.targeting ?? {};
  const setStyles = (patch: Partial<Styles>) => onChange({ ...draft, styles: compact({ ...styles, ...patch }) });
  const setTargeting = (patch: Partial<Targeting>) => onChange({ ...draft, targeting: compact({ ...targeting, ...patch }) });
  const styleText = (key: keyof Styles, label: string, hint?: string) => (
    <Field label={label} hint={hint}>
      <input
        value={String(styles[key] ?? '')}
        spellcheck={false}
        onInput={(e) => setStyles({ [key]: (e.target as HTMLInputElement).value || undefined })}
      />
    </Field>
  );
  const styleNumber = (key: keyof Styles, label: string, min: number, max: number) => (
    <Field label={label} hint={`${min} to ${max}; empty for the default`}>
      <input
        type="number"
        min={min}
        max={max}
        value={String(styles[key] ?? '')}
        onInput={(e) => setStyles({ [key]: numberOrUndefined((e.target as HTMLInputElement).value) })}
      />
    </Field>
  );
  const positions: Array<[string, string]> =
    type === 'banner'
      ? [
          ['top', 'Top'],
          ['bottom', 'Bottom'],
        ]
      : [
          ['bottom_right', 'Bottom right'],
          ['bottom_left', 'Bottom left'],
          ['top_right', 'Top right'],
          ['top_left', 'Top left'],
        ];
  const floating = type !== 'embed';
  const pages = (key: 'include' | 'exclude') => (targeting.pages?.[key] ?? []).join('\n');
  const setPages = (key: 'include' | 'exclude', text: string) => {
    const list = text.split('\n').filter((line) => line.trim() !== '');
    const next = compact({ ...targeting.pages, [key]: list.length ? list : undefined });
    setTargeting({ pages: Object.keys(next).length ? next : undefined });
  };
  const frequency = targeting.frequency ?? { mode: 'always' as const };
  return (
    <>
      <fieldset class="group">
        <legend>Look</legend>
        <div class="builder-fields">
          {styleText('background_color', 'Background color', 'A CSS color such as #ffffff')}
          {styleText('text_color', 'Text color')}
          {styleText('button_color', 'Button color')}
          {styleText('button_text_color', 'Button text color')}
          {type === 'popup' || type === 'full_page' ? styleText('overlay_color', 'Overlay color', 'Behind the form, over the page') : null}
          {styleText('font_family', 'Font family')}
          {styleNumber('font_size', 'Font size (px)', 10, 32)}
          {styleNumber('border_radius', 'Corner radius (px)', 0, 64)}
          {type !== 'banner' ? styleNumber('width', type === 'embed' ? 'Largest width (px)' : 'Width (px)', 200, 1200) : null}
          {type === 'flyout' || type === 'banner' ? (
            <Select
              label="Position"
              value={styles.position ?? positions[0][0]}
              onChange={(v) => setStyles({ position: v as Styles['position'] })}
              options={positions}
            />
          ) : null}
        </div>
      </fieldset>
      {floating ? (
        <fieldset class="group">
          <legend>When it appears</legend>
          <div class="builder-fields">
            <Field label="Delay (seconds)" hint="0 to 3600">
              <input
                type="number"
                min={0}
                max={3600}
                value={String(targeting.delay_seconds ?? '')}
                onInput={(e) => setTargeting({ delay_seconds: numberOrUndefined((e.target as HTMLInputElement).value) })}
              />
            </Field>
            <Field label="After scrolling (%)" hint="0 to 100">
              <input
                type="number"
                min={0}
                max={100}
                value={String(targeting.scroll_percent ?? '')}
                onInput={(e) => setTargeting({ scroll_percent: numberOrUndefined((e.target as HTMLInputElement).value) })}
              />
            </Field>
            <label class="check">
              <input
                type="checkbox"
                checked={Boolean(targeting.exit_intent)}
                onChange={(e) => setTargeting({ exit_intent: (e.target as HTMLInputElement).checked || undefined })}
              />{' '}
              When the visitor is about to leave
            </label>
            <Select
              label="How often"
              value={frequency.mode}
              onChange={(mode) =>
                setTargeting({
                  frequency:
                    mode === 'always'
                      ? undefined
                      : {
                          mode: mode as (typeof FREQUENCY_MODES)[number],
                          ...(mode === 'every_n_days' ? { days: frequency.days ?? 7 } : {}),
                        },
                })
              }
              options={FREQUENCY_MODES.map((m): [string, string] => [m, FREQUENCY_NAMES[m]])}
            />
            {frequency.mode === 'every_n_days' ? (
              <Field label="Days between showings">
                <input
                  type="number"
                  min={1}
                  max={365}
                  value={String(frequency.days ?? '')}
                  onInput={(e) =>
                    setTargeting({ frequency: { mode: 'every_n_days', days: numberOrUndefined((e.target as HTMLInputElement).value) } })
                  }
                />
              </Field>
            ) : null}
            <Field label="Only on pages" hint="URL paths, one per line; * matches anything">
              <textarea rows={2} value={pages('include')} onInput={(e) => setPages('include', (e.target as HTMLTextAreaElement).value)} />
            </Field>
            <Field label="Never on pages">
              <textarea rows={2} value={pages('exclude')} onInput={(e) => setPages('exclude', (e.target as HTMLTextAreaElement).value)} />
            </Field>
          </div>
        </fieldset>
      ) : (
        <p class="muted">An embedded form shows wherever its element is placed on a page (see Embed).</p>
      )}
    </>
  );
}

export function Builder({ type, draft, onChange }: { type: string; draft: Draft; onChange: (draft: Draft) => void }) {
  const steps = Array.isArray(draft.steps) ? draft.steps.filter((s) => s && Array.isArray(s.blocks)) : [];
  const setStep = (step: Step, next: Step) => onChange({ ...draft, steps: steps.map((s) => (s === step ? next : s)) });
  const formSteps = steps.filter((s) => s.kind === 'form').length;
  return (
    <div class="builder">
      {steps.map((step) => (
        <StepEditor
          key={step.id}
          step={step}
          steps={steps}
          onChange={(next) => setStep(step, next)}
          onRemove={
            step.kind === 'form' && formSteps > 1 ? () => onChange({ ...draft, steps: steps.filter((s) => s !== step) }) : undefined
          }
        />
      ))}
      <p>
        <Button
          onClick={() => {
            const id = uniqueId(steps, 'step');
            const step: Step = {
              id,
              name: `Step ${formSteps + 1}`,
              kind: 'form',
              blocks: [{ id: uniqueId(steps, `${id}-next`), type: 'button', label: 'Next', action: 'next' }],
            };
            const at = steps.findIndex((s) => s.kind === 'success');
            const next = [...steps];
            next.splice(at < 0 ? next.length : at, 0, step);
            onChange({ ...draft, steps: next });
          }}
        >
          Add a form step
        </Button>
      </p>
      <h2>Settings of the {type.replace('_', ' ')} form</h2>
      <TypeSettings type={type} draft={draft} onChange={onChange} />
    </div>
  );
}
