// The block editor: the email as a column of blocks (heading, text, image, button, two columns,
// divider, spacer, social links, footer with the unsubscribe link), each with its fields, moved
// with Up/Down or by dragging, and the document's colours and font.
import { useRef, useState } from 'preact/hooks';
import { Button, Field, Select } from '../ui';
import {
  BLOCK_LABELS,
  FONTS,
  NETWORK_LABELS,
  NETWORKS,
  newBlock,
  type Align,
  type Block,
  type BlockDocument,
  type BlockType,
  type Network,
  type Settings,
} from './document';

const ALIGN: Array<[string, string]> = [
  ['left', 'Left'],
  ['center', 'Centre'],
  ['right', 'Right'],
];
const value = (e: Event) => (e.target as HTMLInputElement).value;

/** A text area with Bold, Italic and Link buttons that wrap the selection in the text markup. */
function RichText({ label, text, onChange, rows = 4 }: { label: string; text: string; onChange: (text: string) => void; rows?: number }) {
  const ref = useRef<HTMLTextAreaElement>(null);
  const wrap = (before: string, after: string, placeholder: string) => {
    const el = ref.current;
    if (!el) return;
    const start = el.selectionStart;
    const end = el.selectionEnd;
    const chosen = el.value.slice(start, end) || placeholder;
    const next = `${el.value.slice(0, start)}${before}${chosen}${after}${el.value.slice(end)}`;
    onChange(next);
    requestAnimationFrame(() => {
      el.focus();
      el.setSelectionRange(start + before.length, start + before.length + chosen.length);
    });
  };
  return (
    <div class="rich-text">
      <div class="rich-toolbar" role="toolbar" aria-label={`${label} formatting`}>
        <button
          type="button"
          class="plain"
          title="Bold"
          aria-label="Bold"
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => wrap('**', '**', 'bold text')}
        >
          <strong>B</strong>
        </button>
        <button
          type="button"
          class="plain"
          title="Italic"
          aria-label="Italic"
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => wrap('*', '*', 'italic text')}
        >
          <em>I</em>
        </button>
        <button
          type="button"
          class="plain"
          title="Link"
          aria-label="Link"
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => {
            const url = prompt('Link address (https://…)', 'https://');
            if (url) wrap('[', `](${url.trim()})`, 'link text');
          }}
        >
          Link
        </button>
      </div>
      <Field label={label} hint="**bold**, *italic*, [label](https://…); a blank line starts a paragraph">
        <textarea ref={ref} rows={rows} value={text} onInput={(e) => onChange(value(e))} />
      </Field>
    </div>
  );
}

function ColourField({ label, colour, onChange }: { label: string; colour: string; onChange: (c: string) => void }) {
  return (
    <label class="field inline colour-field">
      <span class="label">{label}</span>
      <input type="color" value={colour} onInput={(e) => onChange(value(e))} />
      <code>{colour}</code>
    </label>
  );
}

function BlockFields({ block, set }: { block: Block; set: (patch: Partial<Block>) => void }) {
  switch (block.type) {
    case 'heading':
      return (
        <div class="block-fields">
          <Field label="Heading text">
            <input value={block.text} onInput={(e) => set({ text: value(e) })} />
          </Field>
          <Select
            label="Size"
            value={String(block.level)}
            onChange={(v) => set({ level: Number(v) as 1 | 2 })}
            options={[
              ['1', 'Large'],
              ['2', 'Medium'],
            ]}
          />
          <Select label="Align" value={block.align} onChange={(v) => set({ align: v as Align })} options={ALIGN} />
        </div>
      );
    case 'text':
      return (
        <div class="block-fields">
          <RichText label="Text" text={block.text} onChange={(text) => set({ text })} />
          <Select label="Align" value={block.align} onChange={(v) => set({ align: v as Align })} options={ALIGN} />
        </div>
      );
    case 'image':
      return (
        <div class="block-fields">
          <Field label="Image address" hint="https://… (hosted elsewhere)">
            <input type="url" value={block.src} onInput={(e) => set({ src: value(e) })} />
          </Field>
          <Field label="Alternative text" hint="Shown when images are off, and in the plain-text part">
            <input value={block.alt} onInput={(e) => set({ alt: value(e) })} />
          </Field>
          <Field label="Link (optional)">
            <input value={block.href} onInput={(e) => set({ href: value(e) })} />
          </Field>
          <Field label="Width (px)">
            <input type="number" min={20} max={600} value={block.width} onInput={(e) => set({ width: Number(value(e)) })} />
          </Field>
        </div>
      );
    case 'button':
      return (
        <div class="block-fields">
          <Field label="Button label">
            <input value={block.label} onInput={(e) => set({ label: value(e) })} />
          </Field>
          <Field label="Button link">
            <input value={block.href} onInput={(e) => set({ href: value(e) })} />
          </Field>
          <ColourField label="Button colour" colour={block.color} onChange={(color) => set({ color })} />
          <ColourField label="Label colour" colour={block.textColor} onChange={(textColor) => set({ textColor })} />
          <Select label="Align" value={block.align} onChange={(v) => set({ align: v as Align })} options={ALIGN} />
        </div>
      );
    case 'columns':
      return (
        <div class="block-fields columns-fields">
          <RichText label="Left column" text={block.left} onChange={(left) => set({ left })} />
          <RichText label="Right column" text={block.right} onChange={(right) => set({ right })} />
        </div>
      );
    case 'divider':
      return (
        <div class="block-fields">
          <ColourField label="Line colour" colour={block.color} onChange={(color) => set({ color })} />
        </div>
      );
    case 'spacer':
      return (
        <div class="block-fields">
          <Field label="Height (px)">
            <input type="number" min={4} max={200} value={block.height} onInput={(e) => set({ height: Number(value(e)) })} />
          </Field>
        </div>
      );
    case 'social':
      return (
        <div class="block-fields">
          {block.links.map((link, i) => (
            <div class="social-row">
              <Select
                label={`Network ${i + 1}`}
                value={link.network}
                onChange={(v) => set({ links: block.links.map((l, j) => (j === i ? { ...l, network: v as Network } : l)) })}
                options={NETWORKS.map((n) => [n, NETWORK_LABELS[n]])}
              />
              <Field label={`Profile link ${i + 1}`}>
                <input
                  value={link.href}
                  onInput={(e) => set({ links: block.links.map((l, j) => (j === i ? { ...l, href: value(e) } : l)) })}
                />
              </Field>
              <Button onClick={() => set({ links: block.links.filter((_, j) => j !== i) })}>Remove link {i + 1}</Button>
            </div>
          ))}
          {block.links.length < NETWORKS.length ? (
            <Button
              onClick={() =>
                set({
                  links: [
                    ...block.links,
                    { network: NETWORKS.find((n) => !block.links.some((l) => l.network === n)) ?? 'facebook', href: 'https://' },
                  ],
                })
              }
            >
              Add a network
            </Button>
          ) : null}
        </div>
      );
    case 'footer':
      return (
        <div class="block-fields">
          <RichText label="Footer text" text={block.text} rows={2} onChange={(text) => set({ text })} />
          <Field label="Unsubscribe link text" hint="Links to {{unsubscribe_url}}: every campaign needs it">
            <input value={block.unsubscribe} onInput={(e) => set({ unsubscribe: value(e) })} />
          </Field>
        </div>
      );
  }
}

export function BlockEditor({ doc, onChange }: { doc: BlockDocument; onChange: (doc: BlockDocument) => void }) {
  const [dragging, setDragging] = useState<number | null>(null);
  const blocks = doc.blocks;
  const setBlocks = (next: Block[]) => onChange({ ...doc, blocks: next });
  const move = (from: number, to: number) => {
    if (to < 0 || to >= blocks.length || from === to) return;
    const next = blocks.slice();
    const [moved] = next.splice(from, 1);
    next.splice(to, 0, moved);
    setBlocks(next);
  };
  const setSettings = (patch: Partial<Settings>) => onChange({ ...doc, settings: { ...doc.settings, ...patch } });
  return (
    <div class="block-editor">
      <ol class="block-list" aria-label="Blocks">
        {blocks.map((block, i) => (
          <li
            key={block.id}
            class={`block-card${dragging === i ? ' dragging' : ''}`}
            aria-label={`Block ${i + 1}: ${BLOCK_LABELS[block.type]}`}
            onDragOver={(e) => {
              if (dragging !== null) e.preventDefault();
            }}
            onDrop={(e) => {
              e.preventDefault();
              if (dragging !== null) move(dragging, i);
              setDragging(null);
            }}
          >
            <div class="block-head">
              <span
                class="drag-handle"
                draggable
                onDragStart={() => setDragging(i)}
                onDragEnd={() => setDragging(null)}
                title="Drag to move"
                aria-hidden="true"
              >
                ⠿
              </span>
              <strong>{BLOCK_LABELS[block.type]}</strong>
              <span class="block-actions">
                <Button aria-label={`Move block ${i + 1} up`} disabled={i === 0} onClick={() => move(i, i - 1)}>
                  ↑
                </Button>
                <Button aria-label={`Move block ${i + 1} down`} disabled={i === blocks.length - 1} onClick={() => move(i, i + 1)}>
                  ↓
                </Button>
                <Button aria-label={`Remove block ${i + 1}`} onClick={() => setBlocks(blocks.filter((_, j) => j !== i))}>
                  Remove
                </Button>
              </span>
            </div>
            <BlockFields block={block} set={(patch) => setBlocks(blocks.map((b, j) => (j === i ? ({ ...b, ...patch } as Block) : b)))} />
          </li>
        ))}
      </ol>
      {blocks.length === 0 ? <p class="muted">No blocks yet: add one below.</p> : null}
      <div class="add-blocks" role="group" aria-label="Add a block">
        {(Object.keys(BLOCK_LABELS) as BlockType[]).map((type) => (
          <Button onClick={() => setBlocks([...blocks, newBlock(type)])}>+ {BLOCK_LABELS[type]}</Button>
        ))}
      </div>
      <fieldset class="group email-style">
        <legend>Style</legend>
        <ColourField label="Background colour" colour={doc.settings.background} onChange={(background) => setSettings({ background })} />
        <ColourField
          label="Content background"
          colour={doc.settings.contentBackground}
          onChange={(contentBackground) => setSettings({ contentBackground })}
        />
        <ColourField label="Text colour" colour={doc.settings.textColor} onChange={(textColor) => setSettings({ textColor })} />
        <ColourField label="Link colour" colour={doc.settings.linkColor} onChange={(linkColor) => setSettings({ linkColor })} />
        <Select label="Font" value={doc.settings.font} onChange={(font) => setSettings({ font })} options={FONTS} />
      </fieldset>
    </div>
  );
}
