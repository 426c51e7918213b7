// The block editor's document and what it becomes: MJML (compiled to HTML by the API) and the
// plain-text part. Text blocks use a small markup: **bold**, *italic*, [label](https://…), blank
// lines between paragraphs. Merge tags ({{first_name|"there"}}) pass through untouched: text is
// escaped for & < > only, so the quotes of a default stay readable to the personaliser.

export const FORMAT = 'postlane-blocks';

export type Block =
  | { id: string; type: 'heading'; text: string; level: 1 | 2; align: Align }
  | { id: string; type: 'text'; text: string; align: Align }
  | { id: string; type: 'image'; src: string; alt: string; href: string; width: number }
  | { id: string; type: 'button'; label: string; href: string; color: string; textColor: string; align: Align }
  | { id: string; type: 'columns'; left: string; right: string }
  | { id: string; type: 'divider'; color: string }
  | { id: string; type: 'spacer'; height: number }
  | { id: string; type: 'social'; links: Array<{ network: Network; href: string }> }
  | { id: string; type: 'footer'; text: string; unsubscribe: string };

export type Align = 'left' | 'center' | 'right';
export type BlockType = Block['type'];
export const NETWORKS = ['facebook', 'x', 'instagram', 'linkedin', 'youtube'] as const;
export type Network = (typeof NETWORKS)[number];

export interface Settings {
  background: string;
  contentBackground: string;
  textColor: string;
  linkColor: string;
  font: string;
}

export interface BlockDocument {
  format: typeof FORMAT;
  version: 1;
  settings: Settings;
  blocks: Block[];
  /** The MJML the blocks made when saved, so the stored content is readable without the editor. */
  mjml?: string;
}

export const BLOCK_LABELS: Record<BlockType, string> = {
  heading: 'Heading',
  text: 'Text',
  image: 'Image',
  button: 'Button',
  columns: 'Two columns',
  divider: 'Divider',
  spacer: 'Spacer',
  social: 'Social links',
  footer: 'Footer',
};

export const FONTS: Array<[string, string]> = [
  ['Helvetica, Arial, sans-serif', 'Helvetica / Arial'],
  ['Georgia, Times, serif', 'Georgia'],
  ['Verdana, Geneva, sans-serif', 'Verdana'],
  ['"Courier New", monospace', 'Courier'],
];

let counter = 0;
export const blockId = () => `b${Date.now().toString(36)}${(counter++).toString(36)}`;

export function newBlock(type: BlockType): Block {
  const id = blockId();
  switch (type) {
    case 'heading':
      return { id, type, text: 'A heading', level: 1, align: 'left' };
    case 'text':
      return { id, type, text: 'Write something here.', align: 'left' };
    case 'image':
      return { id, type, src: '', alt: '', href: '', width: 600 };
    case 'button':
      return { id, type, label: 'Read more', href: 'https://', color: '#2457c5', textColor: '#ffffff', align: 'center' };
    case 'columns':
      return { id, type, left: 'Left column', right: 'Right column' };
    case 'divider':
      return { id, type, color: '#d0d7e2' };
    case 'spacer':
      return { id, type, height: 24 };
    case 'social':
      return {
        id,
        type,
        links: [
          { network: 'facebook', href: 'https://facebook.com/' },
          { network: 'x', href: 'https://x.com/' },
        ],
      };
    case 'footer':
      return { id, type, text: 'You receive this because you subscribed.', unsubscribe: 'Unsubscribe' };
  }
}

export function starterDocument(): BlockDocument {
  return {
    format: FORMAT,
    version: 1,
    settings: { background: '#f4f6fa', contentBackground: '#ffffff', textColor: '#1f2933', linkColor: '#2457c5', font: FONTS[0][0] },
    blocks: [{ ...newBlock('heading'), text: 'Hello {{first_name|"there"}}' } as Block, newBlock('text'), newBlock('footer')],
  };
}

/** A stored campaign content that the block editor can open, or null. */
export function asBlockDocument(content: unknown): BlockDocument | null {
  if (content === null || typeof content !== 'object') return null;
  const doc = content as Partial<BlockDocument>;
  if (doc.format !== FORMAT || !Array.isArray(doc.blocks) || typeof doc.settings !== 'object') return null;
  return {
    format: FORMAT,
    version: 1,
    settings: { ...starterDocument().settings, ...doc.settings },
    blocks: doc.blocks.map((b) => ({ ...b, id: blockId() })) as Block[],
  };
}

// Escaping ----------------------------------------------------------------------------------

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (s: string) => escapeText(s).replace(/"/g, '&quot;');
/** A link target: a merge tag, http(s), mailto or tel; anything else (javascript:) becomes "#". */
export function safeHref(href: string): string {
  const h = href.trim();
  if (/^\{\{\s*[\w.]+\s*\}\}$/.test(h) || /^(https?:|mailto:|tel:|#)/i.test(h)) return h.replace(/"/g, '%22');
  return '#';
}
const colour = (c: string, fallback: string) => (/^#[0-9a-f]{3,8}$/i.test(c) ? c : fallback);

/** The small markup of text blocks as HTML (paragraphs, bold, italic, links). */
export function inlineHtml(source: string, linkColor: string): string {
  return source
    .split(/\n{2,}/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      let html = escapeText(p);
      html = html.replace(
        /\[([^\]\n]+)\]\(([^)\s]+)\)/g,
        (_m, label: string, href: string) =>
          `<a href="${safeHref(href.replace(/&amp;/g, '&')).replace(/&/g, '&amp;')}" style="color:${linkColor}">${label}</a>`,
      );
      html = html.replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>');
      html = html.replace(/(^|[^*])\*([^*\n]+)\*/g, '$1<em>$2</em>');
      return `<p style="margin:0 0 12px">${html.replace(/\n/g, '<br>')}</p>`;
    })
    .join('');
}

/** The small markup as plain text: links as "label (url)". */
export function inlineText(source: string): string {
  return source
    .replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, '$1 ($2)')
    .replace(/\*\*([^*\n]+)\*\*/g, '$1')
    .replace(/(^|[^*])\*([^*\n]+)\*/g, '$1$2')
    .trim();
}

// MJML --------------------------------------------------------------------------------------

const SOCIAL_NAMES: Record<Network, string> = {
  facebook: 'facebook',
  x: 'x',
  instagram: 'instagram',
  linkedin: 'linkedin',
  youtube: 'youtube',
};
export const NETWORK_LABELS: Record<Network, string> = {
  facebook: 'Facebook',
  x: 'X',
  instagram: 'Instagram',
  linkedin: 'LinkedIn',
  youtube: 'YouTube',
};

function section(s: Settings, columns: string[]): string {
  return `<mj-section background-color="${colour(s.contentBackground, '#ffffff')}" padding="0 0">${columns.map((c) => `<mj-column>${c}</mj-column>`).join('')}</mj-section>`;
}

function blockMjml(b: Block, s: Settings): string {
  const link = colour(s.linkColor, '#2457c5');
  switch (b.type) {
    case 'heading':
      return section(s, [
        `<mj-text align="${b.align}" font-size="${b.level === 1 ? 28 : 22}px" font-weight="bold" line-height="1.25"><h${b.level} style="margin:0;font-size:inherit">${escapeText(b.text)}</h${b.level}></mj-text>`,
      ]);
    case 'text':
      return section(s, [`<mj-text align="${b.align}">${inlineHtml(b.text, link)}</mj-text>`]);
    case 'image':
      if (!b.src.trim()) return '';
      return section(s, [
        `<mj-image src="${escapeAttr(safeHref(b.src))}" alt="${escapeAttr(b.alt)}"${b.href.trim() ? ` href="${escapeAttr(safeHref(b.href))}"` : ''} width="${Math.max(20, Math.min(600, Math.round(b.width) || 600))}px" />`,
      ]);
    case 'button':
      return section(s, [
        `<mj-button href="${escapeAttr(safeHref(b.href))}" align="${b.align}" background-color="${colour(b.color, '#2457c5')}" color="${colour(b.textColor, '#ffffff')}" font-size="16px">${escapeText(b.label)}</mj-button>`,
      ]);
    case 'columns':
      return section(s, [`<mj-text>${inlineHtml(b.left, link)}</mj-text>`, `<mj-text>${inlineHtml(b.right, link)}</mj-text>`]);
    case 'divider':
      return section(s, [`<mj-divider border-color="${colour(b.color, '#d0d7e2')}" border-width="1px" />`]);
    case 'spacer':
      return section(s, [`<mj-spacer height="${Math.max(4, Math.min(200, Math.round(b.height) || 24))}px" />`]);
    case 'social': {
      const links = b.links.filter((l) => l.href.trim());
      if (links.length === 0) return '';
      return section(s, [
        `<mj-social mode="horizontal" icon-size="24px">${links.map((l) => `<mj-social-element name="${SOCIAL_NAMES[l.network]}" href="${escapeAttr(safeHref(l.href))}">${NETWORK_LABELS[l.network]}</mj-social-element>`).join('')}</mj-social>`,
      ]);
    }
    case 'footer':
      return section(s, [
        `<mj-text align="center" font-size="12px" color="#6b7785">${inlineHtml(b.text, link)}<p style="margin:0"><a href="{{unsubscribe_url}}" style="color:#6b7785">${escapeText(b.unsubscribe || 'Unsubscribe')}</a></p></mj-text>`,
      ]);
  }
}

export function toMjml(doc: BlockDocument, previewText = ''): string {
  const s = doc.settings;
  const head = [
    '<mj-head>',
    `<mj-attributes><mj-all font-family="${escapeAttr(s.font)}" /><mj-text color="${colour(s.textColor, '#1f2933')}" font-size="16px" line-height="1.5" /></mj-attributes>`,
    previewText ? `<mj-preview>${escapeText(previewText)}</mj-preview>` : '',
    '</mj-head>',
  ].join('');
  const body = doc.blocks.map((b) => blockMjml(b, s)).join('\n');
  return `<mjml>${head}<mj-body background-color="${colour(s.background, '#f4f6fa')}" width="600px">\n${body}\n</mj-body></mjml>`;
}

export function toText(doc: BlockDocument): string {
  const parts: string[] = [];
  for (const b of doc.blocks) {
    if (b.type === 'heading') parts.push(b.text.trim());
    else if (b.type === 'text') parts.push(inlineText(b.text));
    else if (b.type === 'image') {
      if (b.alt.trim()) parts.push(b.href.trim() ? `${b.alt.trim()} (${b.href.trim()})` : b.alt.trim());
    } else if (b.type === 'button') parts.push(`${b.label.trim()}: ${b.href.trim()}`);
    else if (b.type === 'columns') parts.push(inlineText(b.left), inlineText(b.right));
    else if (b.type === 'divider') parts.push('----');
    else if (b.type === 'social')
      parts.push(
        b.links
          .filter((l) => l.href.trim())
          .map((l) => `${NETWORK_LABELS[l.network]}: ${l.href.trim()}`)
          .join('\n'),
      );
    else if (b.type === 'footer') parts.push(`${inlineText(b.text)}\n${b.unsubscribe || 'Unsubscribe'}: {{unsubscribe_url}}`.trim());
  }
  return `${parts.filter(Boolean).join('\n\n')}\n`;
}

// Preview values ----------------------------------------------------------------------------

export const SAMPLES = {
  ada: {
    label: 'Ada Lovelace (sample)',
    values: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org', unsubscribe_url: '#unsubscribe' } as Record<
      string,
      string
    >,
  },
  blank: {
    label: 'A contact without a name',
    values: { email: 'someone@example.org', unsubscribe_url: '#unsubscribe' } as Record<string, string>,
  },
};
export type SampleKey = keyof typeof SAMPLES;

const TAG = /\{\{\s*([\w.]+)\s*(?:\|\s*(?:"([^"]*)"|'([^']*)')\s*)?\}\}/g;
/** Merge tags filled as the personaliser would (missing or blank values take the default). */
export function fillSample(source: string, values: Record<string, string>, html: boolean): string {
  return source.replace(TAG, (_m, name: string, d1?: string, d2?: string) => {
    const value = values[name];
    const text = value !== undefined && value.trim() !== '' ? value : (d1 ?? d2 ?? '');
    return html ? escapeText(text).replace(/"/g, '&quot;') : text;
  });
}

/** A merge tag as written, with its default when given. */
export function mergeTag(field: string, fallback: string): string {
  const f = fallback.replace(/"/g, "'");
  return f ? `{{${field}|"${f}"}}` : `{{${field}}}`;
}
