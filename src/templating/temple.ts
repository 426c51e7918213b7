// Temple, the variable syntax of subjects and bodies
// (https://emailit.com/docs/templates/temple.md):
//   {{name}}  {{ user.name }}  {{items.0.sku}}  {{name|"default"}}
//   {{#if plan}} … {{else}} … {{/if}}   (nestable)
// One module for templates, sends, campaigns and automations.
//
// The source compiles to a flat program (text, value, conditional jump, jump), so parsing
// keeps open ifs on an explicit stack and rendering is a loop: 100k nested ifs or a 10 MB
// body neither overflow the call stack nor take more than linear time. Every scan moves
// forward only; no regular expression runs over unbounded text with backtracking.
import { escapeHtml, isTruthy, lookup, toText } from './values.ts';

export { escapeHtml, isTruthy, lookup, toText } from './values.ts';

export type TempleErrorCode =
  | 'temple.unclosed-tag'
  | 'temple.unclosed-if'
  | 'temple.unexpected-else'
  | 'temple.unexpected-end'
  | 'temple.invalid-expression';

export class TempleSyntaxError extends Error {
  readonly code: TempleErrorCode;
  /** 1-based line and column (UTF-16 code units) of the tag's opening `{{`. */
  readonly line: number;
  readonly column: number;
  /** 0-based offset and length of the tag in the source. */
  readonly offset: number;
  readonly length: number;
  /** The same as `message` (which leaves the position to `line` and `column`, so callers
   *  can place it in their own wording). */
  readonly reason: string;
  constructor(code: TempleErrorCode, reason: string, line: number, column: number, offset: number, length: number) {
    super(reason);
    this.name = 'TempleSyntaxError';
    this.code = code;
    this.reason = reason;
    this.line = line;
    this.column = column;
    this.offset = offset;
    this.length = length;
  }
}

export interface TempleRenderOptions {
  /** True for HTML bodies: inserted values (and defaults) are HTML-escaped. */
  html: boolean;
}

export interface TempleTemplate {
  readonly source: string;
  /** Every variable path the source reads (values and conditions), in order of first use. */
  readonly variables: readonly string[];
  render(variables: unknown, options?: TempleRenderOptions): string;
}

// One shape for every instruction keeps the render loop monomorphic (fast on big sources).
const TEXT = 0;
const VALUE = 1;
const IF = 2; // when the condition is false, continue at `target`
const JUMP = 3;
interface Op {
  kind: number;
  text: string; // TEXT: the text; VALUE: the default
  hasDefault: boolean;
  path: string[];
  target: number;
}
const NO_PATH: string[] = [];
const op = (kind: number, text: string, hasDefault: boolean, path: string[], target: number): Op => ({
  kind,
  text,
  hasDefault,
  path,
  target,
});

/** findTempleErrors reports at most this many errors (a hostile source could have millions). */
export const MAX_REPORTED_ERRORS = 100;
const SNIPPET = 40;
const OPEN_BRACE = 0x7b; // {
const CLOSE_BRACE = 0x7d; // }
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;
const BAR = 0x7c; // |
const BACKSLASH = 0x5c;
const ASCII_SEGMENT = /^[A-Za-z0-9_$-]+$/;
const SEGMENT = /^[\p{L}\p{N}_$-]+$/u;

/** Compiles a source, throwing the first TempleSyntaxError found. */
export function parseTemple(source: string): TempleTemplate {
  const { ops, variables, errors } = compile(source, 1);
  if (errors.length > 0) throw errors[0];
  return {
    source,
    variables,
    render: (vars, options = { html: false }) => run(ops, vars, options.html),
  };
}

/** Renders a source with its variables; throws TempleSyntaxError for malformed syntax. */
export function renderTemple(source: string, variables: unknown, options: TempleRenderOptions): string {
  return parseTemple(source).render(variables, options);
}

/** Every syntax error of a source (up to MAX_REPORTED_ERRORS), for diagnostics; [] when valid. */
export function findTempleErrors(source: string): TempleSyntaxError[] {
  return compile(source, MAX_REPORTED_ERRORS).errors;
}

function run(ops: Op[], variables: unknown, html: boolean): string {
  const parts: string[] = [];
  let pc = 0;
  while (pc < ops.length) {
    const { kind, path } = ops[pc];
    if (kind === TEXT) {
      parts.push(ops[pc].text);
      pc++;
    } else if (kind === VALUE) {
      const value = lookup(variables, path);
      const text = (value === null || value === undefined) && ops[pc].hasDefault ? ops[pc].text : toText(value);
      parts.push(html ? escapeHtml(text) : text);
      pc++;
    } else if (kind === IF) {
      pc = isTruthy(lookup(variables, path)) ? pc + 1 : ops[pc].target;
    } else {
      pc = ops[pc].target;
    }
  }
  return parts.join('');
}

interface OpenIf {
  ifOp: number;
  elseOp: number; // -1 until an {{else}} is seen
  offset: number;
  length: number;
}

type Tag =
  | { kind: 'value'; path: string[]; fallback: string | null }
  | { kind: 'if'; path: string[] }
  | { kind: 'else' }
  | { kind: 'end' }
  | { kind: 'invalid'; reason: string };

function compile(source: string, maxErrors: number) {
  if (typeof source !== 'string') throw new TypeError('Temple source must be a string');
  const ops: Op[] = [];
  const variables = new Set<string>();
  const errors: TempleSyntaxError[] = [];
  const open: OpenIf[] = [];
  const locate = locator(source);
  const fail = (code: TempleErrorCode, reason: string, offset: number, length: number) => {
    const { line, column } = locate(offset);
    errors.push(new TempleSyntaxError(code, reason, line, column, offset, length));
    return errors.length >= maxErrors;
  };

  let pos = 0;
  while (pos < source.length) {
    const start = source.indexOf('{{', pos);
    if (start === -1) {
      ops.push(op(TEXT, source.slice(pos), false, NO_PATH, 0));
      break;
    }
    if (start > pos) ops.push(op(TEXT, source.slice(pos, start), false, NO_PATH, 0));
    const scan = scanTag(source, start + 2);
    if (scan.close === -1) {
      const reason = `Unclosed tag ${quote(source.slice(start, scan.inner === -1 ? start + SNIPPET : scan.inner))}: "{{" has no matching "}}"`;
      if (fail('temple.unclosed-tag', reason, start, (scan.inner === -1 ? source.length : scan.inner) - start)) return done();
      if (scan.inner === -1) break;
      pos = scan.inner; // a later "{{" may start a good tag
      continue;
    }
    const length = scan.close + 2 - start;
    pos = scan.close + 2;
    const tag = parseTag(source.slice(start + 2, scan.close));
    switch (tag.kind) {
      case 'invalid':
        if (fail('temple.invalid-expression', tag.reason, start, length)) return done();
        break;
      case 'value':
        variables.add(tag.path.join('.'));
        ops.push(op(VALUE, tag.fallback ?? '', tag.fallback !== null, tag.path, 0));
        break;
      case 'if':
        variables.add(tag.path.join('.'));
        open.push({ ifOp: ops.length, elseOp: -1, offset: start, length });
        ops.push(op(IF, '', false, tag.path, -1));
        break;
      case 'else': {
        const top = open.at(-1);
        if (!top || top.elseOp !== -1) {
          const reason = top ? 'A second {{else}} in one {{#if}} block' : '{{else}} outside an {{#if}} block';
          if (fail('temple.unexpected-else', reason, start, length)) return done();
          break;
        }
        top.elseOp = ops.length;
        ops.push(op(JUMP, '', false, NO_PATH, -1));
        ops[top.ifOp].target = ops.length;
        break;
      }
      case 'end': {
        const top = open.pop();
        if (!top) {
          if (fail('temple.unexpected-end', '{{/if}} without an open {{#if}}', start, length)) return done();
          break;
        }
        ops[top.elseOp !== -1 ? top.elseOp : top.ifOp].target = ops.length;
        break;
      }
    }
  }
  for (const unclosed of open) {
    if (fail('temple.unclosed-if', '{{#if}} is never closed with {{/if}}', unclosed.offset, unclosed.length)) break;
  }
  return done();

  function done() {
    return { ops, variables: [...variables], errors };
  }
}

/** Finds the `}}` closing a tag whose content starts at `from`. A quoted default after `|`
 *  may contain braces. `inner` is a `{{` met first: the tag is unclosed and scanning resumes
 *  there. An unterminated quote falls back to a scan without quotes. */
function scanTag(source: string, from: number, quotes = true): { close: number; inner: number } {
  let previous = 0;
  for (let i = from; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === CLOSE_BRACE && source.charCodeAt(i + 1) === CLOSE_BRACE) return { close: i, inner: -1 };
    if (c === OPEN_BRACE && source.charCodeAt(i + 1) === OPEN_BRACE) return { close: -1, inner: i };
    if (quotes && (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) && previous === BAR) {
      let j = i + 1;
      while (j < source.length && source.charCodeAt(j) !== c) j += source.charCodeAt(j) === BACKSLASH ? 2 : 1;
      if (j >= source.length) return scanTag(source, from, false);
      i = j;
      previous = c;
      continue;
    }
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) previous = c;
  }
  return { close: -1, inner: -1 };
}

function parseTag(content: string): Tag {
  const text = content.trim();
  if (text === '') return { kind: 'invalid', reason: 'Empty tag "{{}}": put a variable name inside, as in {{first_name}}' };
  if (text === 'else') return { kind: 'else' };
  if (text[0] === '#') {
    const rest = text.slice(1).trimStart();
    const word = leadingWord(rest);
    if (word !== 'if') return { kind: 'invalid', reason: `Unknown block ${quote('#' + word)}: Temple has only {{#if name}}` };
    const condition = rest.slice(2).trim();
    if (condition === '') return { kind: 'invalid', reason: '{{#if}} needs a variable name, as in {{#if plan}}' };
    if (condition.includes('|'))
      return { kind: 'invalid', reason: `A condition is a variable name only, without a default: ${quote(text)}` };
    const path = parsePath(condition);
    return typeof path === 'string' ? { kind: 'invalid', reason: path } : { kind: 'if', path };
  }
  if (text[0] === '/') {
    const word = text.slice(1).trim();
    if (word === 'if') return { kind: 'end' };
    return { kind: 'invalid', reason: `Unknown closing tag ${quote(text)}: Temple closes only {{/if}}` };
  }
  const bar = text.indexOf('|');
  const path = parsePath(bar === -1 ? text : text.slice(0, bar).trimEnd());
  if (typeof path === 'string') return { kind: 'invalid', reason: path };
  if (bar === -1) return { kind: 'value', path, fallback: null };
  const fallback = parseStringLiteral(text.slice(bar + 1).trimStart());
  if (fallback === null) {
    return { kind: 'invalid', reason: `The default after "|" must be one quoted string, as in {{name|"there"}}: ${quote(text)}` };
  }
  return { kind: 'value', path, fallback };
}

function leadingWord(text: string): string {
  let end = 0;
  while (end < text.length && end < SNIPPET && !/\s/.test(text[end])) end++;
  return text.slice(0, end);
}

/** A dotted path as segments, or the reason it is invalid. */
function parsePath(text: string): string[] | string {
  if (text === '') return 'A variable name is missing before "|"';
  const segments = text.split('.');
  if (segments.every((segment) => ASCII_SEGMENT.test(segment) || SEGMENT.test(segment))) return segments;
  return `Invalid variable name ${quote(text)}: use letters, digits, "_" or "-", and "." between nested names`;
}

/** `"text"` or `'text'` with backslash escapes, as the whole of `text`; else null. */
function parseStringLiteral(text: string): string | null {
  const q = text[0];
  if ((q !== '"' && q !== "'") || text.length < 2 || text[text.length - 1] !== q) return null;
  let out = '';
  for (let i = 1; i < text.length - 1; i++) {
    const c = text[i];
    if (c === '\\') {
      if (i + 1 >= text.length - 1) return null; // the closing quote is escaped
      out += text[++i];
    } else if (c === q) {
      return null; // text after the closing quote
    } else {
      out += c;
    }
  }
  return out;
}

function quote(text: string): string {
  return JSON.stringify(text.length > SNIPPET ? `${text.slice(0, SNIPPET)}…` : text);
}

/** Offset → 1-based line and column; the line index is built once, on the first error. */
function locator(source: string) {
  let lineStarts: number[] | null = null;
  return (offset: number) => {
    if (!lineStarts) {
      lineStarts = [0];
      for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) lineStarts.push(i + 1);
    }
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - lineStarts[lo] + 1 };
  };
}
