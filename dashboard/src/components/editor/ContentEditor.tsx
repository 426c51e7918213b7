// A campaign's body, written three ways (tabs): with blocks (stored as the block document, content
// type mjml, with the compiled HTML and a generated plain-text part), as MJML, or as raw HTML and
// text. Loaded with import() by the campaign pages only. The page asks for the finished body with
// `collect()` through `handle` when it saves.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Ref } from 'preact';
import { api } from '../../api/client';
import { useDebounced } from '../../lib/hooks';
import { Tabs } from '../Tabs';
import { ErrorBox, Field } from '../ui';
import { BlockEditor } from './BlockEditor';
import { MergeTagPicker } from './MergeTags';
import { Preview } from './Preview';
import { asBlockDocument, starterDocument, toMjml, toText, type BlockDocument } from './document';

export type ContentType = 'html' | 'text' | 'mjml';
export interface Body {
  content_type: ContentType;
  content?: unknown;
  html?: string;
  text?: string;
}
export interface Initial {
  content_type: ContentType;
  content: unknown;
  html: string | null;
  text: string | null;
}
export interface EditorHandle {
  /** The body to store, compiled now; throws with the compiler's words when it cannot be. */
  collect(): Promise<Body>;
}

type Mode = 'blocks' | 'mjml' | 'html';
const MODES = [
  ['blocks', 'Blocks'],
  ['mjml', 'MJML'],
  ['html', 'HTML'],
] as const;
const UNSUBSCRIBE_TAG = /\{\{\s*unsubscribe_url\s*\}\}/;
const STARTER_HTML =
  '<h1>Hello {{first_name|"there"}}</h1>\n<p>Write your message here.</p>\n<p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>';
const STARTER_TEXT = 'Hello {{first_name|"there"}},\n\nWrite your message here.\n\nUnsubscribe: {{unsubscribe_url}}';
const STARTER_MJML =
  '<mjml>\n  <mj-body>\n    <mj-section>\n      <mj-column>\n        <mj-text>Hello {{first_name|"there"}}</mj-text>\n        <mj-text><a href="{{unsubscribe_url}}">Unsubscribe</a></mj-text>\n      </mj-column>\n    </mj-section>\n  </mj-body>\n</mjml>';

interface Compiled {
  html: string;
  errors: string[];
}

async function compile(mjml: string): Promise<Compiled> {
  const { data, error, response } = await api.POST('/v2/campaigns/mjml/render', { body: { mjml } });
  if (!data)
    return {
      html: '',
      errors: [
        (error as { message?: string; error?: string } | undefined)?.message ??
          `The MJML could not be compiled (error ${response.status}).`,
      ],
    };
  const errors = data.diagnostics.filter((d) => d.severity === 'error').map((d) => (d.line ? `Line ${d.line}: ${d.message}` : d.message));
  return { html: data.html ?? '', errors };
}

function useCompiled(mjml: string, enabled: boolean): Compiled & { busy: boolean } {
  const settled = useDebounced(mjml, 350);
  const [state, setState] = useState<Compiled & { busy: boolean }>({ html: '', errors: [], busy: enabled });
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    setState((s) => ({ ...s, busy: true }));
    compile(settled).then((result) => {
      if (live) setState({ ...result, busy: false });
    });
    return () => {
      live = false;
    };
  }, [settled, enabled]);
  return state;
}

function initialMode(initial: Initial | null): Mode {
  if (!initial) return 'blocks';
  if (asBlockDocument(initial.content)) return 'blocks';
  return initial.content_type === 'mjml' && typeof initial.content === 'string' ? 'mjml' : 'html';
}

/** `template`: blocks only, for an HTML template (its variables are Temple's, named freely). */
export function ContentEditor({
  initial,
  subject,
  previewText,
  handle,
  template = false,
}: {
  initial: Initial | null;
  subject: string;
  previewText?: string;
  handle: Ref<EditorHandle>;
  template?: boolean;
}) {
  const [mode, setMode] = useState<Mode>(() => (template ? 'blocks' : initialMode(initial)));
  const [doc, setDoc] = useState<BlockDocument>(() => asBlockDocument(initial?.content) ?? starterDocument());
  const [mjmlSource, setMjmlSource] = useState(() =>
    initial?.content_type === 'mjml' && typeof initial.content === 'string' ? initial.content : STARTER_MJML,
  );
  const [html, setHtml] = useState(() => (initial && initialMode(initial) === 'html' ? (initial.html ?? '') : STARTER_HTML));
  const [text, setText] = useState(() => (initial && initialMode(initial) !== 'blocks' ? (initial.text ?? '') : STARTER_TEXT));
  const blocksMjml = toMjml(doc, previewText);
  const blocksText = toText(doc);
  const compiledBlocks = useCompiled(blocksMjml, mode === 'blocks');
  const compiledMjml = useCompiled(mjmlSource, mode === 'mjml');

  // The field written in last, where a merge tag goes.
  const lastField = useRef<HTMLInputElement | HTMLTextAreaElement | null>(null);
  const insert = (tag: string) => {
    const el = lastField.current;
    if (!el || !el.isConnected) return;
    const start = el.selectionStart ?? el.value.length;
    const end = el.selectionEnd ?? start;
    el.value = `${el.value.slice(0, start)}${tag}${el.value.slice(end)}`;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.focus();
    el.setSelectionRange(start + tag.length, start + tag.length);
  };

  const body = async (): Promise<Body> => {
    if (mode === 'html') return { content_type: 'html', html: html || undefined, text: text || undefined };
    const source = mode === 'blocks' ? blocksMjml : mjmlSource;
    const result = await compile(source);
    if (result.errors.length > 0 || !result.html)
      throw new Error(`The email could not be compiled: ${result.errors[0] ?? 'no HTML came out'}`);
    return mode === 'blocks'
      ? { content_type: 'mjml', content: { ...doc, mjml: source }, html: result.html, text: blocksText }
      : { content_type: 'mjml', content: source, html: result.html, text: text || undefined };
  };
  if (handle && typeof handle === 'object') handle.current = { collect: body };

  const shownHtml = mode === 'blocks' ? compiledBlocks.html : mode === 'mjml' ? compiledMjml.html : html;
  const shownText = mode === 'blocks' ? blocksText : text;
  const errors = mode === 'blocks' ? compiledBlocks.errors : mode === 'mjml' ? compiledMjml.errors : [];
  const missingUnsubscribe = template
    ? false
    : mode === 'blocks'
      ? !doc.blocks.some((b) => b.type === 'footer') && !UNSUBSCRIBE_TAG.test(blocksMjml)
      : !UNSUBSCRIBE_TAG.test(mode === 'mjml' ? mjmlSource : html) && !UNSUBSCRIBE_TAG.test(text);
  const panel = (
    <div class="editor-grid">
      <div>
        <MergeTagPicker onInsert={insert} variables={template} />
        {mode === 'blocks' ? <BlockEditor doc={doc} onChange={setDoc} /> : null}
        {mode === 'mjml' ? (
          <>
            <Field label="MJML source" hint="Compiled by Postlane; merge tags such as {{first_name|&quot;there&quot;}} are kept">
              <textarea
                class="code"
                name="mjml"
                rows={16}
                spellcheck={false}
                value={mjmlSource}
                onInput={(e) => setMjmlSource((e.target as HTMLTextAreaElement).value)}
              />
            </Field>
            <Field label="Text content">
              <textarea
                class="code"
                name="text"
                spellcheck={false}
                rows={6}
                value={text}
                onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
              />
            </Field>
          </>
        ) : null}
        {mode === 'html' ? (
          <>
            <Field
              label="HTML content"
              hint="{{first_name}}, {{last_name}}, {{email}}, {{cf.field}}, {{unsubscribe_url}}; a default: {{first_name|&quot;there&quot;}}"
            >
              <textarea
                class="code"
                name="html"
                spellcheck={false}
                value={html}
                onInput={(e) => setHtml((e.target as HTMLTextAreaElement).value)}
              />
            </Field>
            <Field label="Text content">
              <textarea
                class="code"
                name="text"
                spellcheck={false}
                rows={6}
                value={text}
                onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
              />
            </Field>
          </>
        ) : null}
        {missingUnsubscribe ? (
          <p class="warning" role="status">
            Add an {'{{unsubscribe_url}}'} link{mode === 'blocks' ? ' (a Footer block has one)' : ''}: a campaign cannot be sent without
            one.
          </p>
        ) : null}
        <ErrorBox error={errors.length > 0 ? `MJML: ${errors.join('; ')}` : null} />
      </div>
      <Preview
        subject={subject}
        html={shownHtml}
        text={shownText}
        busy={mode !== 'html' && (mode === 'blocks' ? compiledBlocks.busy : compiledMjml.busy)}
        {...(template ? { title: 'Preview of the template', fill: false } : {})}
      />
    </div>
  );
  return (
    <div
      class="content-editor"
      onFocusIn={(e) => {
        const el = e.target as HTMLElement;
        if (
          el instanceof HTMLTextAreaElement ||
          (el instanceof HTMLInputElement && ['text', 'url', ''].includes(el.type) && el.name !== 'fallback' && el.name !== 'variable')
        )
          lastField.current = el;
      }}
    >
      {template ? (
        panel
      ) : (
        <Tabs label="Editor" tabs={MODES} selected={mode} onSelect={setMode} panelId="editor-panel">
          {panel}
        </Tabs>
      )}
    </div>
  );
}
