// A small, iterative parser for MJML markup that keeps positions. The mjml package parses
// leniently (htmlparser2 closes what is left open and reports only line numbers), so syntax
// errors are found here, with 1-based line and column and a child-index path for every
// element. Content of "ending tags" (mj-text, mj-button, mj-raw…) is HTML, not MJML: it is
// kept raw and not checked as XML, exactly as mjml treats it.
import type { Diagnostic, MjmlNode, Position } from './types.ts';

export interface ParsedMarkup {
  root: MjmlNode | null;
  diagnostics: Diagnostic[];
}

/** Deeper than any real email; stops hostile input before recursive code (mjml) sees it. */
export const MAX_DEPTH = 100;
const MAX_SYNTAX_DIAGNOSTICS = 1000;

const NAME = /[A-Za-z_][\w:.-]*/y;
const ATTRIBUTE_NAME = /[^\s"'<>/=]+/y;
const UNQUOTED_VALUE = /[^\s"'=<>`]+/y;
const SPACE = /\s*/y;

export class LineIndex {
  private readonly starts: number[] = [0];
  constructor(text: string) {
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }
  at(offset: number): Position {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.starts[mid] <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - this.starts[low] + 1 };
  }
}

interface Open {
  node: MjmlNode;
  name: string;
}

export function parseMarkup(source: string, endingTags: ReadonlySet<string>): ParsedMarkup {
  const lines = new LineIndex(source);
  const diagnostics: Diagnostic[] = [];
  const stack: Open[] = [];
  let root: MjmlNode | null = null;
  let i = 0;
  let tooDeep = false;

  const error = (code: string, message: string, offset: number, extra: Partial<Diagnostic> = {}) => {
    // Hostile input can hold millions of errors; the answer lists a few hundred at most.
    if (diagnostics.length < MAX_SYNTAX_DIAGNOSTICS) diagnostics.push({ severity: 'error', code, message, ...lines.at(offset), ...extra });
  };

  const match = (pattern: RegExp, at: number): string | null => {
    pattern.lastIndex = at;
    const m = pattern.exec(source);
    return m ? m[0] : null;
  };

  const closeUnclosed = (node: MjmlNode) =>
    error('xml.unclosed-tag', `<${node.tagName}> is never closed`, node.offset!, { tag: node.tagName, path: node.path });

  while (i < source.length) {
    const lt = source.indexOf('<', i);
    const textEnd = lt === -1 ? source.length : lt;
    if (textEnd > i) {
      noteText(source, i, textEnd, stack, root, lines, diagnostics);
      i = textEnd;
      if (lt === -1) break;
    }
    // Here source[i] === '<'.
    if (source.startsWith('<!--', i)) {
      const end = source.indexOf('-->', i + 4);
      if (end === -1) {
        error('xml.unclosed-comment', 'Comment is never closed (missing -->)', i);
        break;
      }
      i = end + 3;
      continue;
    }
    if (source.startsWith('<![CDATA[', i)) {
      const end = source.indexOf(']]>', i + 9);
      if (end === -1) {
        error('xml.unclosed-cdata', 'CDATA section is never closed (missing ]]>)', i);
        break;
      }
      i = end + 3;
      continue;
    }
    if (source.startsWith('<?', i) || source.startsWith('<!', i)) {
      const end = source.indexOf('>', i + 2);
      if (end === -1) {
        error('xml.malformed', 'Declaration is never closed (missing >)', i);
        break;
      }
      i = end + 1;
      continue;
    }
    if (source.startsWith('</', i)) {
      const name = match(NAME, i + 2);
      const after = name ? i + 2 + name.length : i + 2;
      const space = match(SPACE, after) ?? '';
      if (!name || source[after + space.length] !== '>') {
        error('xml.malformed', 'Malformed closing tag', i);
        const end = source.indexOf('>', i);
        i = end === -1 ? source.length : end + 1;
        continue;
      }
      const tag = name.toLowerCase();
      const closeStart = i;
      i = after + space.length + 1;
      const depth = findOpen(stack, tag);
      if (depth === -1) {
        error('xml.unexpected-closing-tag', `</${tag}> closes no open element`, closeStart, { tag });
        continue;
      }
      while (stack.length - 1 > depth) closeUnclosed(stack.pop()!.node);
      stack.pop();
      continue;
    }

    const name = match(NAME, i + 1);
    if (!name) {
      error('xml.malformed', "Unescaped '<' (write &lt; for a literal less-than sign)", i);
      i += 1;
      continue;
    }
    const start = i;
    const tag = name.toLowerCase();
    const attributes: Record<string, string> = {};
    const attributePositions: Record<string, Position> = {};
    let j = i + 1 + name.length;
    let selfClosing = false;
    let terminated = false;
    let broken = false;
    while (j < source.length) {
      j += (match(SPACE, j) ?? '').length;
      if (source[j] === '>') {
        terminated = true;
        j += 1;
        break;
      }
      if (source.startsWith('/>', j)) {
        terminated = true;
        selfClosing = true;
        j += 2;
        break;
      }
      const attribute = match(ATTRIBUTE_NAME, j);
      if (!attribute) {
        error('xml.malformed', `Unexpected character ${JSON.stringify(source[j] ?? '')} in <${tag}>`, j, { tag });
        broken = true;
        break;
      }
      const attributeOffset = j;
      j += attribute.length;
      j += (match(SPACE, j) ?? '').length;
      let value = '';
      if (source[j] === '=') {
        j += 1;
        j += (match(SPACE, j) ?? '').length;
        const quote = source[j];
        if (quote === '"' || quote === "'") {
          const close = source.indexOf(quote, j + 1);
          if (close === -1) {
            error('xml.unclosed-attribute', `Value of ${attribute} is never closed (missing ${quote})`, j, { tag, attribute });
            broken = true;
            j = source.length;
            break;
          }
          value = source.slice(j + 1, close);
          j = close + 1;
        } else {
          const unquoted = match(UNQUOTED_VALUE, j);
          if (!unquoted) {
            error('xml.malformed', `Attribute ${attribute} has no value`, j, { tag, attribute });
            broken = true;
            break;
          }
          value = unquoted;
          j += unquoted.length;
        }
      }
      if (Object.hasOwn(attributes, attribute)) {
        error('xml.duplicate-attribute', `Attribute ${attribute} appears twice on <${tag}>`, attributeOffset, { tag, attribute });
      }
      attributes[attribute] = value;
      attributePositions[attribute] = lines.at(attributeOffset);
    }
    if (!terminated) {
      if (!broken) error('xml.malformed', `Tag <${tag}> is never terminated (missing >)`, start, { tag });
      const end = source.indexOf('>', j);
      if (end === -1) break;
      i = end + 1;
      continue;
    }
    i = j;

    const parent = stack.at(-1)?.node ?? null;
    if (!parent && root) {
      error('xml.multiple-roots', `<${tag}> after the root element; a document has one root`, start, { tag });
      if (!selfClosing) i = skipElement(source, tag, i);
      continue;
    }
    const path = parent ? [...parent.path, parent.children.length] : [];
    if (path.length > MAX_DEPTH) {
      if (!tooDeep) error('xml.too-deep', `Elements are nested more than ${MAX_DEPTH} levels deep`, start, { tag });
      tooDeep = true;
      if (!selfClosing) i = skipElement(source, tag, i);
      continue;
    }
    const node: MjmlNode = {
      tagName: tag,
      attributes,
      children: [],
      path,
      offset: start,
      ...lines.at(start),
      attributePositions,
    };
    if (parent) parent.children.push(node);
    else root = node;
    if (selfClosing) continue;

    if (endingTags.has(tag)) {
      // Raw HTML content up to the matching close tag (same-name nesting counted).
      const close = findClosing(source, tag, i);
      if (close === null) {
        // Recover at the next closing tag of an open ancestor, so that one missing
        // </mj-text> is one error, not one per enclosing element.
        closeUnclosed(node);
        const resume = findAncestorClosing(source, stack, i);
        if (resume === -1) break;
        i = resume;
        continue;
      }
      const content = source.slice(i, close.start).trim();
      if (content) node.content = content;
      i = close.end;
      continue;
    }
    stack.push({ node, name: tag });
  }
  while (stack.length > 0) closeUnclosed(stack.pop()!.node);
  diagnostics.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  return { root, diagnostics };
}

function findOpen(stack: Open[], tag: string): number {
  for (let k = stack.length - 1; k >= 0; k--) if (stack[k].name === tag) return k;
  return -1;
}

/** Text between tags: ignored by mjml except inside ending tags, so it earns a warning. */
function noteText(
  source: string,
  from: number,
  to: number,
  stack: Open[],
  root: MjmlNode | null,
  lines: LineIndex,
  diagnostics: Diagnostic[],
) {
  const text = source.slice(from, to);
  const firstVisible = text.search(/\S/);
  if (firstVisible === -1) return;
  const at = lines.at(from + firstVisible);
  const parent = stack.at(-1)?.node;
  if (!parent) {
    if (diagnostics.length >= MAX_SYNTAX_DIAGNOSTICS) return;
    diagnostics.push({
      severity: 'error',
      code: root ? 'xml.text-outside-root' : 'xml.text-before-root',
      message: root ? 'Text after the root element' : 'Text before the root element',
      ...at,
    });
    return;
  }
  // One warning per element is enough.
  if (parent.strayText) return;
  parent.strayText = at;
}

/** The end of an element that is skipped (its content is ignored). */
function skipElement(source: string, tag: string, from: number): number {
  const close = findClosing(source, tag, from);
  return close ? close.end : source.length;
}

function findAncestorClosing(source: string, stack: Open[], from: number): number {
  if (stack.length === 0) return -1;
  const names = [...new Set(stack.map((open) => open.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))];
  const pattern = new RegExp(`</(?:${names.join('|')})\\s*>`, 'gi');
  pattern.lastIndex = from;
  const m = pattern.exec(source);
  return m ? m.index : -1;
}

function findClosing(source: string, tag: string, from: number): { start: number; end: number } | null {
  const pattern = new RegExp(`<(/?)${tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[\\s/>])[^>]*>`, 'giy');
  let depth = 0;
  for (let at = source.indexOf('<', from); at !== -1; at = source.indexOf('<', at + 1)) {
    pattern.lastIndex = at;
    const m = pattern.exec(source);
    if (!m) continue;
    if (m[1] === '/') {
      if (depth === 0) return { start: at, end: at + m[0].length };
      depth -= 1;
    } else if (!m[0].endsWith('/>')) {
      depth += 1;
    }
  }
  return null;
}
