// Checks an MJML source (markup, MJML JSON or a stored document) the way POST /mjml/validate
// describes: XML syntax, MJML structure, attribute names and types, variable syntax. Every
// finding is a diagnostic with a stable code; only errors make a document invalid, and only
// a valid document is handed to the compiler.
import { findTempleErrors } from '../../templating/temple.ts';
import {
  COMPONENTLESS_TAGS,
  GLOBAL_ATTRIBUTES,
  ROOT_ATTRIBUTES,
  attributeTypeError,
  compileMjml,
  components,
  dependencies,
  endingTags,
} from './engine.ts';
import { MAX_DEPTH, parseMarkup } from './markup.ts';
import { COMPONENTLESS_PARENTS, DOCUMENT_SCHEMA_VERSION } from './reference.ts';
import type { Diagnostic, MjmlNode, SourceFormat } from './types.ts';

export interface MjmlAnalysis {
  valid: boolean;
  format: SourceFormat | null;
  diagnostics: Diagnostic[];
  /** What the compiler takes: the markup, or the JSON tree. Null when unrecognized. */
  input: string | object | null;
}

/** Most diagnostics one answer carries; a hostile document could produce millions. */
const MAX_DIAGNOSTICS = 200;

const unrecognized = (message: string): MjmlAnalysis => ({
  valid: false,
  format: null,
  diagnostics: [{ severity: 'error', code: 'document.unrecognized', message }],
  input: null,
});

export function analyzeMjml(source: unknown): MjmlAnalysis {
  if (typeof source === 'string') {
    const trimmed = source.trimStart();
    if (trimmed.startsWith('{')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(source);
      } catch {
        return unrecognized('The source starts like JSON but is not valid JSON');
      }
      return analyzeObject(parsed);
    }
    if (trimmed.startsWith('<')) return analyzeMarkup(source);
    return unrecognized('The source is neither MJML markup, MJML JSON nor a stored MJML document');
  }
  return analyzeObject(source);
}

function analyzeObject(value: unknown): MjmlAnalysis {
  if (!isPlainObject(value)) return unrecognized('The source is neither MJML markup, MJML JSON nor a stored MJML document');
  if ('document_schema_version' in value) {
    const version = value.document_schema_version;
    if (version !== DOCUMENT_SCHEMA_VERSION) {
      return {
        valid: false,
        format: null,
        diagnostics: [
          {
            severity: 'error',
            code: 'document.unsupported-version',
            message: `Unsupported document_schema_version ${JSON.stringify(version)}; this service reads version ${DOCUMENT_SCHEMA_VERSION}`,
          },
        ],
        input: null,
      };
    }
    const content = value.content;
    if (typeof content === 'string' && content.trimStart().startsWith('<')) return analyzeMarkup(content);
    if (isPlainObject(content) && typeof content.tagName === 'string') return analyzeJson(content);
    return unrecognized('A stored MJML document needs `content`: MJML markup or MJML JSON');
  }
  if (typeof value.tagName === 'string') return analyzeJson(value);
  return unrecognized('The source is neither MJML markup, MJML JSON nor a stored MJML document');
}

function analyzeMarkup(source: string): MjmlAnalysis {
  const parsed = parseMarkup(source, endingTags);
  const diagnostics = [...parsed.diagnostics];
  if (parsed.root) checkTree(parsed.root, diagnostics);
  for (const e of findTempleErrors(source)) {
    diagnostics.push({ severity: 'error', code: e.code, message: e.reason, line: e.line, column: e.column });
  }
  return finish('markup', diagnostics, source, parsed.root === null);
}

function analyzeJson(value: Record<string, unknown>): MjmlAnalysis {
  const diagnostics: Diagnostic[] = [];
  const root = toNode(value, diagnostics);
  if (root) {
    checkTree(root, diagnostics);
    checkJsonVariables(root, diagnostics);
  }
  return finish('json', diagnostics, root ? stripPositions(root) : null, root === null);
}

function finish(format: SourceFormat, all: Diagnostic[], input: string | object | null, empty: boolean): MjmlAnalysis {
  // Reading order: positioned findings by line and column, then the rest as found.
  all.sort(readingOrder);
  if (empty && !all.some((d) => d.severity === 'error')) {
    all.push({ severity: 'error', code: 'document.unrecognized', message: 'The source contains no element' });
  }
  const diagnostics = all.length > MAX_DIAGNOSTICS ? all.slice(0, MAX_DIAGNOSTICS) : all;
  if (all.length > MAX_DIAGNOSTICS) {
    diagnostics.push({
      severity: 'error',
      code: 'document.too-many-diagnostics',
      message: `Only the first ${MAX_DIAGNOSTICS} diagnostics are listed`,
    });
  }
  return { valid: !all.some((d) => d.severity === 'error'), format, diagnostics, input };
}

/** Positioned findings by line and column; then JSON findings by element path (document order). */
function readingOrder(a: Diagnostic, b: Diagnostic): number {
  if (a.line !== undefined || b.line !== undefined) {
    if (a.line === undefined) return 1;
    if (b.line === undefined) return -1;
    return a.line - b.line || (a.column ?? 0) - (b.column ?? 0);
  }
  const pa = a.path ?? [];
  const pb = b.path ?? [];
  for (let k = 0; k < Math.min(pa.length, pb.length); k++) if (pa[k] !== pb[k]) return pa[k] - pb[k];
  return pa.length - pb.length;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** MJML JSON to nodes with paths, iteratively (a hostile tree may be very deep). */
function toNode(value: Record<string, unknown>, diagnostics: Diagnostic[]): MjmlNode | null {
  const shape = (raw: Record<string, unknown>, path: number[]): MjmlNode | null => {
    if (typeof raw.tagName !== 'string' || raw.tagName === '') {
      diagnostics.push({ severity: 'error', code: 'json.invalid-node', message: 'Every element needs a tagName string', path });
      return null;
    }
    const attributes = raw.attributes ?? {};
    if (!isPlainObject(attributes)) {
      diagnostics.push({ severity: 'error', code: 'json.invalid-node', message: 'attributes must be an object', tag: raw.tagName, path });
    }
    const node: MjmlNode = {
      tagName: raw.tagName.toLowerCase(),
      attributes: isPlainObject(attributes) ? { ...attributes } : {},
      children: [],
      path,
    };
    for (const [name, v] of Object.entries(node.attributes)) {
      if (!['string', 'number', 'boolean'].includes(typeof v)) {
        diagnostics.push({
          severity: 'error',
          code: 'json.invalid-node',
          message: `Attribute ${name} must be a string, number or boolean`,
          tag: node.tagName,
          attribute: name,
          path,
        });
        delete node.attributes[name];
      }
    }
    if (raw.content !== undefined && raw.content !== null) {
      if (typeof raw.content === 'string') node.content = raw.content;
      else diagnostics.push({ severity: 'error', code: 'json.invalid-node', message: 'content must be a string', tag: node.tagName, path });
    }
    return node;
  };
  const root = shape(value, []);
  if (!root) return null;
  const queue: Array<[MjmlNode, unknown]> = [[root, value.children]];
  while (queue.length > 0) {
    const [node, children] = queue.pop()!;
    if (children === undefined || children === null) continue;
    if (!Array.isArray(children)) {
      diagnostics.push({
        severity: 'error',
        code: 'json.invalid-node',
        message: 'children must be an array',
        tag: node.tagName,
        path: node.path,
      });
      continue;
    }
    if (node.path.length >= MAX_DEPTH && children.length > 0) {
      diagnostics.push({
        severity: 'error',
        code: 'xml.too-deep',
        message: `Elements are nested more than ${MAX_DEPTH} levels deep`,
        tag: node.tagName,
        path: node.path,
      });
      continue;
    }
    for (const child of children) {
      const path = [...node.path, node.children.length];
      if (!isPlainObject(child)) {
        diagnostics.push({ severity: 'error', code: 'json.invalid-node', message: 'Every child must be an object', path });
        continue;
      }
      const childNode = shape(child, path);
      if (!childNode) continue;
      node.children.push(childNode);
      queue.push([childNode, child.children]);
    }
  }
  return root;
}

/** The plain MJML JSON the compiler takes (no paths or positions). */
function stripPositions(root: MjmlNode): object {
  const copy = (node: MjmlNode): Record<string, unknown> => ({
    tagName: node.tagName,
    attributes: Object.fromEntries(Object.entries(node.attributes).map(([k, v]) => [k, String(v)])),
    children: [],
    ...(node.content !== undefined ? { content: node.content } : {}),
  });
  const out = copy(root);
  const queue: Array<[MjmlNode, Record<string, unknown>]> = [[root, out]];
  while (queue.length > 0) {
    const [node, target] = queue.pop()!;
    for (const child of node.children) {
      const c = copy(child);
      (target.children as unknown[]).push(c);
      queue.push([child, c]);
    }
  }
  return out;
}

function checkJsonVariables(root: MjmlNode, diagnostics: Diagnostic[]) {
  walk(root, (node) => {
    const texts: Array<[string, string | undefined]> = Object.entries(node.attributes)
      .filter(([, v]) => typeof v === 'string')
      .map(([name, v]) => [v as string, name]);
    if (node.content) texts.push([node.content, undefined]);
    for (const [text, attribute] of texts) {
      for (const e of findTempleErrors(text)) {
        diagnostics.push({
          severity: 'error',
          code: e.code,
          message: e.reason,
          tag: node.tagName,
          ...(attribute ? { attribute } : {}),
          path: node.path,
        });
      }
    }
  });
}

function walk(root: MjmlNode, visit: (node: MjmlNode, parent: MjmlNode | null) => boolean | void) {
  const stack: Array<[MjmlNode, MjmlNode | null]> = [[root, null]];
  while (stack.length > 0) {
    const [node, parent] = stack.pop()!;
    if (visit(node, parent) === false) continue;
    for (let k = node.children.length - 1; k >= 0; k--) stack.push([node.children[k], node]);
  }
}

const where = (node: MjmlNode) => ({
  ...(node.line !== undefined ? { line: node.line, column: node.column } : {}),
  tag: node.tagName,
  path: node.path,
});

function allowedChild(parent: string, child: string): boolean {
  if (parent === 'mj-attributes') return true;
  if ((COMPONENTLESS_TAGS as readonly string[]).includes(child)) return COMPONENTLESS_PARENTS[child].includes(parent);
  if (!components[child]) return true; // reported as an unknown tag instead
  return (dependencies[parent] ?? []).some((d) => (typeof d === 'string' ? d === child : d.test(child)));
}

/** Allowed attributes (name → type) of an element, or null when any attribute is allowed. */
function attributeTypes(tag: string, parent: string | null): Record<string, string> | null {
  if (tag === 'mjml' && parent === null) return ROOT_ATTRIBUTES;
  if (tag === 'mj-all') return null;
  if (tag === 'mj-class') return null;
  if (tag === 'mj-selector') return { path: 'string' };
  if (tag === 'mj-html-attribute') return { name: 'string' };
  const component = components[tag];
  const own = component?.allowedAttributes ?? {};
  const types: Record<string, string> = { ...own };
  for (const name of GLOBAL_ATTRIBUTES) types[name] ??= 'string';
  // Defaults inside mj-attributes (<mj-text color="…"/>) may also name a class.
  return types;
}

function checkTree(root: MjmlNode, diagnostics: Diagnostic[]) {
  if (root.tagName !== 'mjml') {
    diagnostics.push({
      severity: 'error',
      code: 'document.unrecognized',
      message: `The root element must be <mjml>, not <${root.tagName}>`,
      ...where(root),
    });
    return;
  }
  walk(root, (node, parent) => {
    const tag = node.tagName;
    const known = tag === 'mjml' ? parent === null : Boolean(components[tag]) || (COMPONENTLESS_TAGS as readonly string[]).includes(tag);
    if (parent && !known) {
      if (tag === 'mj-include') {
        diagnostics.push({
          severity: 'error',
          code: 'mjml.include-unsupported',
          message: 'mj-include is not supported: a document must be self-contained',
          ...where(node),
        });
      } else {
        diagnostics.push({ severity: 'error', code: 'mjml.unknown-tag', message: `<${tag}> is not an MJML element`, ...where(node) });
      }
      return false;
    }
    if (parent && !allowedChild(parent.tagName, tag)) {
      const allowedParents = allowedParentsOf(tag);
      diagnostics.push({
        severity: 'error',
        code: 'mjml.invalid-child',
        message: `<${tag}> cannot be used inside <${parent.tagName}>${allowedParents.length ? `, only inside: ${allowedParents.join(', ')}` : ''}`,
        ...where(node),
      });
    }
    checkAttributes(node, parent, diagnostics);
    if (node.strayText) {
      diagnostics.push({
        severity: 'warning',
        code: 'mjml.ignored-text',
        message: `Text directly inside <${tag}> is dropped by MJML; put it in mj-text or mj-raw`,
        ...node.strayText,
        tag,
        path: node.path,
      });
    } else if (node.content?.trim() && !endingTags.has(tag) && parent?.tagName !== 'mj-attributes' && node.line === undefined) {
      diagnostics.push({
        severity: 'warning',
        code: 'mjml.ignored-text',
        message: `Content of <${tag}> is dropped by MJML; put it in mj-text or mj-raw`,
        tag,
        path: node.path,
      });
    }
    // Children of a default-attributes block are attribute sets, not elements.
    if (tag === 'mj-attributes') {
      for (const child of node.children) {
        if (components[child.tagName] || child.tagName === 'mj-all' || child.tagName === 'mj-class')
          checkAttributes(child, node, diagnostics);
        else
          diagnostics.push({
            severity: 'error',
            code: 'mjml.unknown-tag',
            message: `<${child.tagName}> in mj-attributes is not an MJML element`,
            ...where(child),
          });
      }
      return false;
    }
    return true;
  });
  checkHead(root, diagnostics);
}

function allowedParentsOf(tag: string): string[] {
  if ((COMPONENTLESS_TAGS as readonly string[]).includes(tag)) return COMPONENTLESS_PARENTS[tag];
  return Object.entries(dependencies)
    .filter(([parent, children]) => parent !== 'mj-attributes' && children.some((d) => typeof d === 'string' && d === tag))
    .map(([parent]) => parent);
}

function checkAttributes(node: MjmlNode, parent: MjmlNode | null, diagnostics: Diagnostic[]) {
  const types = attributeTypes(node.tagName, parent ? parent.tagName : null);
  if (!types) return;
  for (const [name, raw] of Object.entries(node.attributes)) {
    const at = node.attributePositions?.[name] ?? (node.line !== undefined ? { line: node.line, column: node.column } : {});
    const base = { ...at, tag: node.tagName, attribute: name, path: node.path };
    const type = types[name];
    if (!type) {
      diagnostics.push({
        severity: 'error',
        code: 'mjml.unknown-attribute',
        message: `Attribute ${name} is not allowed on <${node.tagName}>`,
        ...base,
      });
      continue;
    }
    const value = String(raw);
    if (value.includes('{{')) continue; // a variable: its value is only known at send time
    const problem = attributeTypeError(type, value);
    if (problem)
      diagnostics.push({ severity: 'error', code: 'mjml.invalid-attribute-value', message: `Attribute ${name} ${problem}`, ...base });
  }
}

function checkHead(root: MjmlNode, diagnostics: Diagnostic[]) {
  const body = root.children.find((c) => c.tagName === 'mj-body');
  if (!body) diagnostics.push({ severity: 'error', code: 'mjml.missing-body', message: 'The document has no <mj-body>', ...where(root) });
  const head = root.children.find((c) => c.tagName === 'mj-head');
  const title = head?.children.find((c) => c.tagName === 'mj-title');
  if (!title) {
    diagnostics.push({
      severity: 'warning',
      code: 'mjml.missing-title',
      message: 'No <mj-title>: add one inside <mj-head> for the HTML title',
      ...where(head ?? root),
    });
  } else if (!title.content?.trim()) {
    diagnostics.push({ severity: 'warning', code: 'mjml.missing-title', message: '<mj-title> is empty', ...where(title) });
  }
  if (!head?.children.some((c) => c.tagName === 'mj-preview')) {
    diagnostics.push({
      severity: 'info',
      code: 'mjml.missing-preview',
      message: 'No <mj-preview>: inboxes will show the first text of the email as preview',
      ...where(head ?? root),
    });
  }
}

export interface MjmlRender extends MjmlAnalysis {
  html: string | null;
}

/** Checks and, when valid, compiles. A compiler failure becomes a diagnostic, not a 500. */
export async function renderMjml(source: unknown): Promise<MjmlRender> {
  const analysis = analyzeMjml(source);
  if (!analysis.valid || analysis.input === null) return { ...analysis, html: null };
  try {
    const html = await compileMjml(analysis.input);
    return { ...analysis, html };
  } catch (error) {
    return {
      ...analysis,
      valid: false,
      html: null,
      diagnostics: [
        ...analysis.diagnostics,
        { severity: 'error', code: 'mjml.compile-failed', message: `MJML could not compile the document: ${(error as Error).message}` },
      ],
    };
  }
}
