// The MJML checker as a unit: XML syntax with positions, MJML structure and attributes,
// the three source formats, and hostile input that must neither crash nor hang.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeMjml, renderMjml } from '../../src/resources/mjml/validate.ts';
import { processMjml } from '../../src/resources/mjml/pool.ts';
import { sourceAsText } from '../../src/resources/mjml/service.ts';

type Brief = [code: string, line: number | null, column: number | null, path: string | null, extra?: string];

/** Errors (and warnings when asked) as [code, line, column, path, tag or attribute]. */
function findings(source: unknown, severities = ['error']): Brief[] {
  return analyzeMjml(source)
    .diagnostics.filter((d) => severities.includes(d.severity))
    .map((d) => {
      const brief: Brief = [d.code, d.line ?? null, d.column ?? null, d.path ? d.path.join('.') : null];
      if (d.attribute) brief.push(d.attribute);
      else if (d.tag) brief.push(d.tag);
      return brief;
    });
}

const wrap = (body: string, head = '<mj-head><mj-title>T</mj-title><mj-preview>P</mj-preview></mj-head>') =>
  `<mjml>${head}<mj-body>${body}</mj-body></mjml>`;

/** 1-based line and column of the nth occurrence of `needle`, counted independently of the parser. */
function at(source: string, needle: string, nth = 0): [number, number] {
  let offset = -1;
  for (let i = 0; i <= nth; i++) offset = source.indexOf(needle, offset + 1);
  assert.ok(offset >= 0, `${needle} not in source`);
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  return [line, offset - (before.lastIndexOf('\n') + 1) + 1];
}

test('XML syntax errors have codes, 1-based lines and columns, and element paths', () => {
  assert.deepEqual(findings('<mjml>\n  <mj-body>\n    <mj-section>\n  </mj-body>\n</mjml>'), [
    ['xml.unclosed-tag', 3, 5, '0.0', 'mj-section'],
  ]);
  assert.deepEqual(findings('<mjml>\n<mj-body>\n</mj-section>\n</mj-body>\n</mjml>'), [
    ['xml.unexpected-closing-tag', 3, 1, null, 'mj-section'],
  ]);
  assert.deepEqual(findings('<mjml><mj-body><!-- never closed </mj-body></mjml>'), [
    ['xml.unclosed-tag', 1, 1, '', 'mjml'],
    ['xml.unclosed-tag', 1, 7, '0', 'mj-body'],
    ['xml.unclosed-comment', 1, 16, null],
  ]);
  assert.deepEqual(findings('<mjml>\n<mj-body background-color="#fff>\n</mj-body></mjml>'), [
    ['xml.unclosed-tag', 1, 1, '', 'mjml'],
    ['mjml.missing-body', 1, 1, '', 'mjml'],
    ['xml.unclosed-attribute', 2, 27, null, 'background-color'],
  ]);
  const duplicate = wrap('<mj-section padding="1px" padding="2px"></mj-section>');
  assert.deepEqual(findings(duplicate), [['xml.duplicate-attribute', ...at(duplicate, 'padding', 1), null, 'padding']]);
  assert.deepEqual(findings('<mjml><mj-body></mj-body></mjml><mjml></mjml>'), [['xml.multiple-roots', 1, 33, null, 'mjml']]);
  assert.deepEqual(findings('<mjml><mj-body></mj-body></mjml>\ntrailing'), [['xml.text-outside-root', 2, 1, null]]);
  assert.deepEqual(findings('<mjml><mj-body>\n  < 3</mj-body></mjml>'), [['xml.malformed', 2, 3, null]]);
  // CRLF line ends and tabs: a column counts characters on its line.
  assert.deepEqual(findings('<mjml>\r\n\t<mj-body>\r\n\t\t<mj-column></mj-column>\r\n\t</mj-body>\r\n</mjml>'), [
    ['mjml.invalid-child', 3, 3, '0.0', 'mj-column'],
  ]);
});

test('content of ending tags is HTML, not MJML; tag names are case-insensitive like mjml', () => {
  const html = wrap(
    '<mj-section><mj-column><mj-text><p>open <br> <b>bold</mj-text><MJ-BUTTON href="#">Go</MJ-BUTTON></mj-column></mj-section>',
  );
  const analysis = analyzeMjml(html);
  assert.deepEqual(analysis.diagnostics, []);
  assert.equal(analysis.valid, true);
  assert.deepEqual(findings(wrap('<mj-raw><mj-raw>nested</mj-raw> same name</mj-raw>')), []);
  const unclosed = wrap('<mj-section><mj-column><mj-text>never closed</mj-column></mj-section>');
  assert.deepEqual(findings(unclosed), [['xml.unclosed-tag', ...at(unclosed, '<mj-text>'), '1.0.0.0', 'mj-text']]);
});

test('MJML structure: unknown tags, invalid children, unknown attributes and values, includes, defaults', () => {
  const unknown = wrap('<mj-section><mj-colum></mj-colum></mj-section>');
  assert.deepEqual(findings(unknown), [['mjml.unknown-tag', ...at(unknown, '<mj-colum>'), '1.0.0', 'mj-colum']]);
  const include = wrap('<mj-include path="header.mjml" />');
  assert.deepEqual(findings(include), [['mjml.include-unsupported', ...at(include, '<mj-include'), '1.0', 'mj-include']]);
  const misplaced = wrap('<mj-class name="x" />');
  assert.deepEqual(
    findings(misplaced),
    [['mjml.invalid-child', ...at(misplaced, '<mj-class'), '1.0', 'mj-class']],
    'mj-class belongs in mj-attributes',
  );
  const image = wrap(
    '<mj-section><mj-column><mj-image src="a.png" width="50%" fluid-on-mobile="maybe" href="{{link}}" /></mj-column></mj-section>',
  );
  assert.deepEqual(findings(image), [
    ['mjml.invalid-attribute-value', ...at(image, 'width='), '1.0.0.0', 'width'],
    ['mjml.invalid-attribute-value', ...at(image, 'fluid-on-mobile='), '1.0.0.0', 'fluid-on-mobile'],
  ]);
  assert.deepEqual(
    findings(wrap('<mj-section css-class="a" mj-class="b" text-align="{{align}}"></mj-section>')),
    [],
    'global attributes; variables are not type-checked',
  );
  const defaults =
    '<mjml lang="en" dir="sideways"><mj-head><mj-attributes><mj-text colour="red" /><mj-widget /><mj-all anything="1" /><mj-class name="c" whatever="x" /></mj-attributes></mj-head><mj-body></mj-body></mjml>';
  assert.deepEqual(findings(defaults), [
    ['mjml.invalid-attribute-value', ...at(defaults, 'dir='), '', 'dir'],
    ['mjml.unknown-attribute', ...at(defaults, 'colour='), '0.0.0', 'colour'],
    ['mjml.unknown-tag', ...at(defaults, '<mj-widget'), '0.0.1', 'mj-widget'],
  ]);
  assert.deepEqual(findings('<mjml><mj-head><mj-title>x</mj-title></mj-head></mjml>'), [['mjml.missing-body', 1, 1, '', 'mjml']]);
  assert.deepEqual(findings('<mj-body></mj-body>'), [['document.unrecognized', 1, 1, '', 'mj-body']]);
});

test('warnings and infos: missing or empty title, missing preview, text MJML would drop', () => {
  const all = ['error', 'warning', 'info'];
  assert.deepEqual(findings('<mjml><mj-head><mj-title> </mj-title></mj-head><mj-body></mj-body></mjml>', all), [
    ['mjml.missing-preview', 1, 7, '0', 'mj-head'],
    ['mjml.missing-title', 1, 16, '0.0', 'mj-title'],
  ]);
  assert.deepEqual(findings(wrap('<mj-section>\n  {{#if vip}}<mj-column></mj-column>{{/if}}</mj-section>'), all), [
    ['mjml.ignored-text', 2, 3, '1.0', 'mj-section'],
  ]);
  assert.equal(analyzeMjml(wrap('<mj-section>stray</mj-section>')).valid, true, 'warnings do not invalidate');
});

test('variable syntax errors carry temple.* codes and positions', () => {
  const unclosedIf = wrap('<mj-section><mj-column><mj-text>{{#if a}}x</mj-text></mj-column></mj-section>');
  assert.deepEqual(findings(unclosedIf), [['temple.unclosed-if', ...at(unclosedIf, '{{#if'), null]]);
  const stray = wrap('<mj-raw>{{/if}}</mj-raw>');
  assert.deepEqual(findings(stray), [['temple.unexpected-end', ...at(stray, '{{/if'), null]]);
  const json = { tagName: 'mjml', children: [{ tagName: 'mj-body', children: [{ tagName: 'mj-raw', content: 'a {{ b' }] }] };
  assert.deepEqual(findings(json), [['temple.unclosed-tag', null, null, '0.0', 'mj-raw']]);
});

test('formats: MJML JSON, JSON text, stored documents; malformed JSON nodes', () => {
  const tree = { tagName: 'mjml', attributes: {}, children: [{ tagName: 'mj-body', attributes: { width: 500 }, children: [] }] };
  for (const source of [tree, JSON.stringify(tree), { document_schema_version: 1, content: tree }]) {
    assert.equal(analyzeMjml(source).format, 'json');
    assert.deepEqual(findings(source), [['mjml.invalid-attribute-value', null, null, '0', 'width']], 'width 500 has no unit');
  }
  const stored = analyzeMjml({ document_schema_version: 1, content: '<mjml><mj-body></mj-body></mjml>' });
  assert.deepEqual([stored.format, stored.valid], ['markup', true]);
  assert.deepEqual(findings({ tagName: 'mjml', children: [{ tagName: 'mj-body', attributes: [], children: 'x' }, 7, { nope: 1 }] }), [
    ['json.invalid-node', null, null, '0', 'mj-body'],
    ['json.invalid-node', null, null, '0', 'mj-body'],
    ['json.invalid-node', null, null, '1'],
    ['json.invalid-node', null, null, '1'],
  ]);
  assert.deepEqual(findings('{"tagName": "mjml"'), [['document.unrecognized', null, null, null]]);
  assert.deepEqual(findings({ document_schema_version: 1 }), [['document.unrecognized', null, null, null]]);
  assert.deepEqual(findings(['mjml']), [['document.unrecognized', null, null, null]]);
});

test('hostile input neither crashes nor hangs, and answers a bounded list', async () => {
  const deep = `<mjml><mj-body>${'<mj-section>'.repeat(200_000)}`;
  const deepResult = analyzeMjml(deep);
  assert.equal(deepResult.valid, false);
  assert.ok(deepResult.diagnostics.length <= 201);
  const tooDeep = analyzeMjml(`<mjml><mj-body>${'<mj-wrapper>'.repeat(150)}${'</mj-wrapper>'.repeat(150)}</mj-body></mjml>`);
  assert.deepEqual(
    tooDeep.diagnostics.filter((d) => d.code === 'xml.too-deep').map((d) => [d.line, d.column, d.path?.length]),
    [[1, 16 + 12 * 99, undefined]],
    'the element at depth 101 (root = 1)',
  );

  const lessThans = analyzeMjml('<'.repeat(1_000_000));
  assert.equal(lessThans.valid, false);
  assert.ok(lessThans.diagnostics.length <= 201);
  assert.equal(lessThans.diagnostics.at(-1)!.code, 'document.too-many-diagnostics');

  const attributes = analyzeMjml(`<mjml ${Array.from({ length: 100_000 }, (_, i) => `a${i}="1"`).join(' ')}><mj-body></mj-body></mjml>`);
  assert.ok(attributes.diagnostics.length <= 201);

  assert.equal(analyzeMjml(`<mjml><mj-body>${'<mj-raw>'.repeat(100_000)}`).valid, false);
  assert.equal(analyzeMjml(`<mjml><mj-body><mj-raw>${'{{'.repeat(500_000)}</mj-raw></mj-body></mjml>`).valid, false);
  assert.equal(analyzeMjml(`<mjml ${'x'.repeat(1_000_000)}`).valid, false);

  // JSON nested far beyond any email: checked iteratively, never compiled.
  let nested: Record<string, unknown> = { tagName: 'mj-section' };
  for (let i = 0; i < 50_000; i++) nested = { tagName: 'mj-section', children: [nested] };
  const json = await renderMjml({ tagName: 'mjml', children: [{ tagName: 'mj-body', children: [nested] }] });
  assert.equal(json.valid, false);
  assert.equal(json.html, null);
  assert.ok(json.diagnostics.some((d) => d.code === 'xml.too-deep'));

  // Too deep even to turn into JSON text: refused before any work.
  let abyss: Record<string, unknown> = {};
  for (let i = 0; i < 1_000_000; i++) abyss = { c: abyss };
  assert.deepEqual(sourceAsText(abyss), { problem: 'The source is nested too deeply.' });
});

test('the worker pool checks and compiles concurrently and renders variables', async () => {
  const good = wrap('<mj-section><mj-column><mj-text>Hi {{name|"you"}}</mj-text></mj-column></mj-section>');
  const results = await Promise.all([
    processMjml({ source: good, compile: true, variables: { name: '<Bo>' } }),
    processMjml({ source: good, compile: false }),
    processMjml({ source: '<mjml>', compile: true }),
    processMjml({ source: good, compile: true }),
  ]);
  assert.deepEqual(
    results.map((r) => [r.valid, r.html === null]),
    [
      [true, false],
      [true, true],
      [false, true],
      [true, false],
    ],
  );
  assert.ok(results[0].rendered_html!.includes('Hi &lt;Bo&gt;'));
  assert.equal(results[3].rendered_html, null);
});
