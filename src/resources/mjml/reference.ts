// GET /mjml/reference: the 36 elements of MJML (https://emailit.com/docs/templates/mjml.md), with
// their parents, children and attributes read from the compiler's own registry, so the reference
// always matches what validate and render accept.
import { COMPONENTLESS_TAGS, GLOBAL_ATTRIBUTES, MJML_VERSION, ROOT_ATTRIBUTES, components, dependencies } from './engine.ts';

import { DOCUMENT_SCHEMA_VERSION } from './versions.ts';

export { DOCUMENT_SCHEMA_VERSION };

type Category = 'root' | 'head' | 'layout' | 'content' | 'interactive' | 'child' | 'advanced';

const CATALOG: Array<[tag: string, label: string, category: Category, description: string]> = [
  ['mjml', 'Document', 'root', 'The root of every MJML document; holds one mj-head and one mj-body.'],
  ['mj-head', 'Head', 'head', 'Document settings that produce no visible content: title, preview, fonts, styles, default attributes.'],
  ['mj-title', 'Title', 'head', 'The HTML <title> of the email, shown by some clients and in browser previews.'],
  ['mj-preview', 'Preview text', 'head', 'The preheader text many inboxes show after the subject line.'],
  [
    'mj-attributes',
    'Default attributes',
    'head',
    'Default attribute values for components (by tag), for all components (mj-all) or for named classes (mj-class).',
  ],
  ['mj-all', 'All components', 'child', 'Inside mj-attributes: attributes applied to every component.'],
  ['mj-class', 'Class', 'child', 'Inside mj-attributes: a named set of attributes that components use through mj-class="name".'],
  ['mj-breakpoint', 'Breakpoint', 'head', 'The width below which columns stack for mobile layouts (default 480px).'],
  ['mj-font', 'Font', 'head', 'Imports a web font by name and stylesheet URL for clients that support it.'],
  ['mj-style', 'Style', 'head', 'CSS added to the document; inline="inline" inlines it into the elements it matches.'],
  [
    'mj-html-attributes',
    'HTML attributes',
    'advanced',
    'Adds HTML attributes to elements of the compiled output, selected with CSS selectors.',
  ],
  ['mj-selector', 'Selector', 'child', 'Inside mj-html-attributes: the CSS selector (path) of the elements to change.'],
  ['mj-html-attribute', 'HTML attribute', 'child', 'Inside mj-selector: one attribute (name) and its value for the selected elements.'],
  ['mj-body', 'Body', 'layout', 'The visible email: sections, wrappers and heroes, at a fixed width (600px by default).'],
  ['mj-wrapper', 'Wrapper', 'layout', 'Groups sections to share a background, border or padding.'],
  ['mj-section', 'Section', 'layout', 'A horizontal row of columns; the main layout block.'],
  ['mj-group', 'Group', 'layout', 'Keeps columns side by side on mobile instead of stacking them.'],
  ['mj-column', 'Column', 'layout', 'A column inside a section; holds content components. Columns stack on mobile.'],
  ['mj-hero', 'Hero', 'layout', 'A full-width block with a background image and content on top of it.'],
  ['mj-text', 'Text', 'content', 'Text and inline HTML, with font, color and spacing attributes.'],
  ['mj-button', 'Button', 'content', 'A link styled as a button that works in every client.'],
  ['mj-image', 'Image', 'content', 'A responsive image, optionally linked.'],
  ['mj-divider', 'Divider', 'content', 'A horizontal line between content blocks.'],
  ['mj-spacer', 'Spacer', 'content', 'Vertical space of a given height.'],
  ['mj-table', 'Table', 'content', 'An HTML table (tr/td rows) for tabular content such as order lines.'],
  [
    'mj-raw',
    'Raw HTML',
    'advanced',
    'HTML passed through unchanged, for anything MJML does not cover (and template logic between blocks).',
  ],
  ['mj-social', 'Social links', 'interactive', 'A row or column of social network icons with links.'],
  ['mj-social-element', 'Social link', 'child', 'Inside mj-social: one network icon with its link and optional label.'],
  ['mj-navbar', 'Navigation bar', 'interactive', 'A row of navigation links that collapses into a menu on mobile where supported.'],
  ['mj-navbar-link', 'Navigation link', 'child', 'Inside mj-navbar: one navigation link.'],
  ['mj-accordion', 'Accordion', 'interactive', 'Collapsible sections of content (expanded in clients without interactivity).'],
  ['mj-accordion-element', 'Accordion item', 'child', 'Inside mj-accordion: one item with a title and a text.'],
  ['mj-accordion-title', 'Accordion title', 'child', 'Inside mj-accordion-element: the clickable title.'],
  ['mj-accordion-text', 'Accordion text', 'child', 'Inside mj-accordion-element: the content shown when the item is open.'],
  ['mj-carousel', 'Carousel', 'interactive', 'An image gallery with thumbnails (the first image in clients without interactivity).'],
  ['mj-carousel-image', 'Carousel image', 'child', 'Inside mj-carousel: one image, optionally linked.'],
];

export interface ComponentReference {
  tag: string;
  label: string;
  description: string;
  category: Category;
  ending_tag: boolean;
  parents: string[];
  children: string[];
  attributes: Array<{ name: string; type: string; default: string | null }>;
}

const ANY = ['*'];

function childrenOf(tag: string): string[] {
  if (tag === 'mj-attributes') return ANY;
  return (dependencies[tag] ?? []).filter((child): child is string => typeof child === 'string');
}

function parentsOf(tag: string): string[] {
  if (tag === 'mj-all' || tag === 'mj-class') return ['mj-attributes'];
  return CATALOG.map(([parent]) => parent).filter((parent) => parent !== 'mj-attributes' && childrenOf(parent).includes(tag));
}

function attributesOf(tag: string, category: Category): ComponentReference['attributes'] {
  const stringAttribute = (name: string) => ({ name, type: 'string', default: null });
  if (tag === 'mjml') return Object.entries(ROOT_ATTRIBUTES).map(([name, type]) => ({ name, type, default: null }));
  if (tag === 'mj-all') return [stringAttribute('*')];
  if (tag === 'mj-class') return [stringAttribute('name'), stringAttribute('*')];
  if (tag === 'mj-selector') return [stringAttribute('path')];
  if (tag === 'mj-html-attribute') return [stringAttribute('name')];
  const component = components[tag];
  const defaults = component?.defaultAttributes ?? {};
  const own = Object.entries(component?.allowedAttributes ?? {}).map(([name, type]) => {
    const value = defaults[name];
    return { name, type, default: typeof value === 'string' ? value : null };
  });
  const global =
    ['layout', 'content', 'interactive', 'child'].includes(category) && tag !== 'mj-body' ? GLOBAL_ATTRIBUTES.map(stringAttribute) : [];
  return [...own, ...global];
}

/** Every element, computed once. */
export const COMPONENT_REFERENCE: readonly ComponentReference[] = CATALOG.map(([tag, label, category, description]) => ({
  tag,
  label,
  description,
  category,
  ending_tag: Boolean(components[tag]?.endingTag),
  parents: tag === 'mjml' ? [] : parentsOf(tag),
  children: childrenOf(tag),
  attributes: attributesOf(tag, category),
}));

/** Where an element may appear, for tags outside the registry (mj-all, mj-class, …). */
export const COMPONENTLESS_PARENTS: Record<string, string[]> = Object.fromEntries(
  COMPONENTLESS_TAGS.map((tag) => [tag, COMPONENT_REFERENCE.find((c) => c.tag === tag)!.parents]),
);

const TEMPLE_GUIDE = [
  'Variables (Temple) work in MJML text, attributes and raw HTML and are left in place by compilation:',
  '{{first_name}} inserts a value; spaces inside the braces are allowed.',
  '{{user.name}} and {{items.0.sku}} read nested properties and list elements.',
  '{{first_name|"there"}} gives a default for a missing or null value.',
  '{{#if plan}} … {{else}} … {{/if}} renders one branch; else is optional.',
  'Missing values render as empty text. Values are HTML-escaped in HTML. No loops, filters or helpers.',
  'Put conditionals around whole blocks inside mj-raw (text directly inside mj-section or mj-column is dropped by MJML).',
].join('\n');

const RULES = [
  'A document has one <mjml> root holding an optional <mj-head> and one <mj-body>.',
  'mj-body holds mj-section, mj-wrapper, mj-hero and mj-raw; mj-section holds mj-column and mj-group; content components go in mj-column or mj-hero.',
  'Content of ending tags (mj-text, mj-button, mj-table, mj-raw, …) is HTML and is not parsed as MJML.',
  'Each element accepts only its listed attributes (plus mj-class and css-class on body components), with values of the listed types; values containing {{variables}} are not type-checked.',
  'mj-include is not supported: documents are self-contained.',
  'Every document should have an mj-title (warning) and may have an mj-preview (info).',
  `Sources may be MJML markup, MJML JSON ({tagName, attributes, children, content}) or a stored document ({document_schema_version: ${DOCUMENT_SCHEMA_VERSION}, format, content}), at most 2 MB.`,
  'Only diagnostics of severity error make a document invalid; each has a stable code, and markup diagnostics carry a 1-based line and column and the child-index path of the element.',
].join('\n');

function referenceText(): string {
  const lines = [`MJML ${MJML_VERSION} reference (document schema version ${DOCUMENT_SCHEMA_VERSION})`, '', RULES, '', TEMPLE_GUIDE, ''];
  for (const c of COMPONENT_REFERENCE) {
    lines.push(`<${c.tag}> ${c.label} [${c.category}${c.ending_tag ? ', ending tag' : ''}]: ${c.description}`);
    if (c.parents.length) lines.push(`  parents: ${c.parents.join(', ')}`);
    if (c.children.length) lines.push(`  children: ${c.children.join(', ')}`);
    if (c.attributes.length) {
      lines.push(
        `  attributes: ${c.attributes.map((a) => `${a.name} (${a.type}${a.default !== null ? `, default ${a.default}` : ''})`).join('; ')}`,
      );
    }
  }
  return lines.join('\n');
}

let cached: ReturnType<typeof buildReference> | null = null;

/** The reference never changes while the process runs: built once. */
export function mjmlReference() {
  cached ??= buildReference();
  return cached;
}

function buildReference() {
  return {
    mjml_version: MJML_VERSION,
    document_schema_version: DOCUMENT_SCHEMA_VERSION,
    editors: {
      'mjml-code': { version: '1.0.0', stage: 'alpha' },
      'mjml-visual': { version: '0.1.0', stage: 'alpha' },
    },
    components: COMPONENT_REFERENCE,
    temple_guide: TEMPLE_GUIDE,
    rules: RULES,
    reference_text: referenceText(),
  };
}
