// Temple (https://emailit.com/docs/templates/temple.md): pure-function tests of the renderer, its
// errors and hostile input.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_REPORTED_ERRORS, TempleSyntaxError, findTempleErrors, parseTemple, renderTemple } from '../src/templating/temple.ts';

const text = (source: string, variables: unknown = {}) => renderTemple(source, variables, { html: false });
const html = (source: string, variables: unknown = {}) => renderTemple(source, variables, { html: true });

/** The error parseTemple throws, as plain fields. */
function syntaxError(source: string) {
  try {
    parseTemple(source);
  } catch (error) {
    assert.ok(error instanceof TempleSyntaxError, `expected a TempleSyntaxError, got ${String(error)}`);
    assert.ok(error instanceof Error);
    assert.equal(error.reason, error.message);
    return { code: error.code, line: error.line, column: error.column, message: error.message };
  }
  assert.fail(`expected ${JSON.stringify(source)} to be rejected`);
}

const codes = (source: string) => findTempleErrors(source).map((e) => [e.code, e.line, e.column]);

// A guard against hangs only: these tests finish in a fraction of this.
const hostile = { timeout: 30_000 };

describe('variables', () => {
  test('text without tags passes through unchanged, including single braces and stray closers', () => {
    assert.equal(text(''), '');
    assert.equal(text('Hello, world'), 'Hello, world');
    assert.equal(text('a {b} c }} d } { e'), 'a {b} c }} d } { e');
    assert.equal(html('<p>Tom & Jerry</p>'), '<p>Tom & Jerry</p>', 'template text itself is never escaped');
  });

  test('{{name}} inserts a value; spaces, tabs and newlines inside the braces are allowed', () => {
    const vars = { first_name: 'Ada' };
    assert.equal(text('Hi {{first_name}}!', vars), 'Hi Ada!');
    assert.equal(text('Hi {{ first_name }}!', vars), 'Hi Ada!');
    assert.equal(text('Hi {{\tfirst_name\n}}!', vars), 'Hi Ada!');
    assert.equal(text('{{first_name}}{{first_name}}', vars), 'AdaAda');
  });

  test('names are case-sensitive and may use letters of any script, digits, _ and -', () => {
    assert.equal(text('{{Name}}|{{name}}', { name: 'low', Name: 'Up' }), 'Up|low');
    assert.equal(
      text('{{prénom}} {{company-name}} {{_x1}} {{42}}', { prénom: 'Zoé', 'company-name': 'ACME', _x1: 'y', 42: 'n' }),
      'Zoé ACME y n',
    );
  });

  test('nested paths read objects and list elements by index', () => {
    const vars = {
      user: { name: 'Bob', address: { city: 'Oslo' } },
      items: [{ sku: 'A1' }, { sku: 'B2' }],
      matrix: [
        [1, 2],
        [3, 4],
      ],
    };
    assert.equal(text('{{user.name}} in {{user.address.city}}', vars), 'Bob in Oslo');
    assert.equal(text('{{items.0.sku}},{{items.1.sku}}', vars), 'A1,B2');
    assert.equal(text('{{matrix.1.0}}', vars), '3');
    assert.equal(text('[{{items.2.sku}}][{{items.x}}][{{items.01}}][{{user.name.first}}][{{nope.deeper}}]', vars), '[][][][][]');
    assert.equal(text('{{obj.0}}', { obj: { 0: 'zero' } }), 'zero', 'a numeric key of an object');
  });

  test('only own properties are read: nothing leaks from prototypes', () => {
    const vars = { name: 'Ada', list: [1], obj: {} };
    assert.equal(
      text('[{{constructor}}][{{__proto__}}][{{toString}}][{{name.length}}][{{list.length}}][{{obj.hasOwnProperty}}]', vars),
      '[][][][][][]',
    );
    assert.equal(text('{{name}}', Object.create({ name: 'inherited' })), '');
  });

  test('missing or null values render as empty text; absent variables are fine', () => {
    assert.equal(text('[{{missing}}][{{nothing}}]', { nothing: null }), '[][]');
    assert.equal(text('[{{a}}]', undefined), '[]');
    assert.equal(text('[{{a}}]', null), '[]');
    assert.equal(text('[{{a.b}}]', 'a string'), '[]');
  });

  test('values become text: numbers and booleans as written, arrays joined with commas, objects as [object Object]', () => {
    const vars = {
      n: 42,
      f: 3.5,
      neg: -1,
      zero: 0,
      yes: true,
      no: false,
      list: ['a', 'b'],
      nested: [1, [2, 3]],
      holes: [null, 'x', undefined],
      empty: [],
      obj: { a: 1 },
      s: '',
    };
    assert.equal(
      text('{{n}}|{{f}}|{{neg}}|{{zero}}|{{yes}}|{{no}}|{{list}}|{{nested}}|{{holes}}|{{empty}}|{{obj}}|{{s}}', vars),
      '42|3.5|-1|0|true|false|a,b|1,2,3|,x,||[object Object]|',
    );
  });
});

describe('defaults', () => {
  test('{{name|"default"}} is used when the value is missing or null, not when it is empty, 0 or false', () => {
    const vars = { nil: null, empty: '', zero: 0, no: false, name: 'Ada' };
    assert.equal(text('{{missing|"there"}}', vars), 'there');
    assert.equal(text('{{nil|"there"}}', vars), 'there');
    assert.equal(text('[{{empty|"x"}}][{{zero|"x"}}][{{no|"x"}}][{{name|"x"}}]', vars), '[][0][false][Ada]');
    assert.equal(text('{{ missing | "there" }}', vars), 'there');
    assert.equal(text('{{user.name|"friend"}}', { user: {} }), 'friend');
  });

  test('single quotes, escapes, and braces or bars inside the default', () => {
    assert.equal(text("{{a|'single'}}"), 'single');
    assert.equal(text('{{a|"say \\"hi\\""}}'), 'say "hi"');
    assert.equal(text('{{a|"back\\\\slash"}}'), 'back\\slash');
    assert.equal(text('{{a|"}}"}} after'), '}} after');
    assert.equal(text('{{a|"{{b}}"}}'), '{{b}}');
    assert.equal(text('{{a|"x|y"}}'), 'x|y');
    assert.equal(text('{{a|""}}.'), '.');
    assert.equal(text('{{a|"it\'s"}}'), "it's");
  });
});

describe('HTML escaping', () => {
  test('values and defaults are escaped in HTML bodies', () => {
    const vars = { name: `<script>alert("x")</script> & 'co'` };
    assert.equal(html('<p>{{name}}</p>', vars), '<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;</p>');
    assert.equal(html('<a title="{{t}}">', { t: '" onmouseover="x' }), '<a title="&quot; onmouseover=&quot;x">');
    assert.equal(html('{{missing|"<b>&</b>"}}'), '&lt;b&gt;&amp;&lt;/b&gt;');
    assert.equal(html('{{list}}', { list: ['<a>', 'b&c'] }), '&lt;a&gt;,b&amp;c');
  });

  test('text bodies and subjects are not escaped', () => {
    const vars = { name: `<b>Tom & "Jerry"</b>` };
    assert.equal(text('Subject: {{name}}', vars), 'Subject: <b>Tom & "Jerry"</b>');
    assert.equal(parseTemple('{{name}}').render(vars), '<b>Tom & "Jerry"</b>', 'render without options is text');
  });
});

describe('conditionals', () => {
  test('{{#if}} … {{else}} … {{/if}} chooses a branch; else is optional', () => {
    assert.equal(text('{{#if plan}}Plan: {{plan}}{{else}}No plan{{/if}}', { plan: 'pro' }), 'Plan: pro');
    assert.equal(text('{{#if plan}}Plan: {{plan}}{{else}}No plan{{/if}}', {}), 'No plan');
    assert.equal(text('a{{#if x}}b{{/if}}c', { x: 1 }), 'abc');
    assert.equal(text('a{{#if x}}b{{/if}}c', {}), 'ac');
    assert.equal(text('{{ #if x }}y{{ else }}n{{ /if }}|{{# if x}}y{{/ if}}', { x: true }), 'y|y');
    assert.equal(text('{{#if x}}{{else}}{{/if}}'), '');
  });

  test('truthiness: empty string, false, 0, null, missing, empty array and empty object are false', () => {
    const check = (value: unknown) => text('{{#if v}}T{{else}}F{{/if}}', value === undefined ? {} : { v: value });
    for (const value of ['', false, 0, -0, NaN, null, undefined, [], {}])
      assert.equal(check(value), 'F', `${JSON.stringify(value)} is false`);
    for (const value of ['x', '0', ' ', 'false', true, 1, -1, 0.5, [0], [''], { a: null }])
      assert.equal(check(value), 'T', `${JSON.stringify(value)} is true`);
  });

  test('conditions read nested paths', () => {
    const source = '{{#if user.vip}}VIP{{else}}regular{{/if}} {{#if items.0}}has items{{/if}}';
    assert.equal(text(source, { user: { vip: true }, items: ['a'] }), 'VIP has items');
    assert.equal(text(source, { user: {}, items: [] }), 'regular ');
  });

  test('ifs nest, with else at every level', () => {
    const source = '{{#if a}}A{{#if b}}B{{else}}!B{{#if c}}C{{/if}}{{/if}}{{else}}!A{{#if b}}B{{else}}!B{{/if}}{{/if}}.';
    const cases: Array<[Record<string, boolean>, string]> = [
      [{ a: true, b: true, c: true }, 'AB.'],
      [{ a: true, b: false, c: true }, 'A!BC.'],
      [{ a: true, b: false, c: false }, 'A!B.'],
      [{ a: false, b: true }, '!AB.'],
      [{ a: false, b: false }, '!A!B.'],
    ];
    for (const [vars, expected] of cases) assert.equal(text(source, vars), expected, JSON.stringify(vars));
  });

  test('a multi-line template renders as expected', () => {
    const source = [
      'Hi {{ first_name | "there" }},',
      '{{#if orders}}',
      'Your orders: {{orders}}',
      '{{else}}',
      'No orders yet.',
      '{{/if}}',
      'Bye',
    ].join('\n');
    assert.equal(text(source, { orders: [1, 2] }), 'Hi there,\n\nYour orders: 1,2\n\nBye');
    assert.equal(text(source, { first_name: 'Ada' }), 'Hi Ada,\n\nNo orders yet.\n\nBye');
  });
});

describe('parsed templates', () => {
  test('parseTemple compiles once and renders many times; variables lists every path read', () => {
    const template = parseTemple('{{#if vip}}Dear {{ user.name }}{{else}}Hi {{user.name|"there"}}{{/if}} {{items.0.sku}}');
    assert.deepEqual(template.variables, ['vip', 'user.name', 'items.0.sku']);
    assert.equal(template.render({ vip: 1, user: { name: 'A' } }, { html: false }), 'Dear A ');
    assert.equal(template.render({ user: { name: '<B>' } }, { html: true }), 'Hi &lt;B&gt; ');
    assert.equal(template.source.length > 0, true);
  });
});

describe('syntax errors', () => {
  test('an unclosed tag gives temple.unclosed-tag at the "{{" with 1-based line and column', () => {
    assert.deepEqual(syntaxError('Hello {{name'), {
      code: 'temple.unclosed-tag',
      line: 1,
      column: 7,
      message: 'Unclosed tag "{{name": "{{" has no matching "}}"',
    });
    assert.deepEqual(syntaxError('line one\nline two {{ oops\n'), {
      code: 'temple.unclosed-tag',
      line: 2,
      column: 10,
      message: 'Unclosed tag "{{ oops\\n": "{{" has no matching "}}"',
    });
    assert.equal(syntaxError('{{').code, 'temple.unclosed-tag');
    assert.equal(syntaxError('{{{{{{').code, 'temple.unclosed-tag');
  });

  test('a tag that runs into the next "{{" is unclosed, and checking goes on from there', () => {
    assert.deepEqual(codes('Hi {{name, welcome to {{company}} {{oops'), [
      ['temple.unclosed-tag', 1, 4],
      ['temple.unclosed-tag', 1, 35],
    ]);
  });

  test('{{#if}} without {{/if}} gives temple.unclosed-if at the opening tag', () => {
    assert.deepEqual(syntaxError('ok\r\n  {{#if a}} yes'), {
      code: 'temple.unclosed-if',
      line: 2,
      column: 3,
      message: '{{#if}} is never closed with {{/if}}',
    });
    assert.deepEqual(codes('{{#if a}}{{#if b}}{{/if}}\n{{#if c}}'), [
      ['temple.unclosed-if', 1, 1],
      ['temple.unclosed-if', 2, 1],
    ]);
  });

  test('{{else}} outside an if, or a second else, gives temple.unexpected-else', () => {
    assert.deepEqual(syntaxError('a {{else}} b'), {
      code: 'temple.unexpected-else',
      line: 1,
      column: 3,
      message: '{{else}} outside an {{#if}} block',
    });
    assert.deepEqual(syntaxError('{{#if a}}x{{else}}y{{else}}z{{/if}}'), {
      code: 'temple.unexpected-else',
      line: 1,
      column: 20,
      message: 'A second {{else}} in one {{#if}} block',
    });
  });

  test('{{/if}} without an open if gives temple.unexpected-end', () => {
    assert.deepEqual(syntaxError('{{#if a}}x{{/if}}\n{{/if}}'), {
      code: 'temple.unexpected-end',
      line: 2,
      column: 1,
      message: '{{/if}} without an open {{#if}}',
    });
  });

  test('malformed expressions give temple.invalid-expression', () => {
    const invalid = [
      '{{}}',
      '{{   }}',
      '{{first name}}',
      '{{a..b}}',
      '{{.a}}',
      '{{a.}}',
      '{{a-b c}}',
      '{{{name}}}',
      '{{"literal"}}',
      '{{x|y}}',
      '{{x|}}',
      '{{|"d"}}',
      '{{x|"a" "b"}}',
      '{{x|"a"|"b"}}',
      '{{x|"unterminated}}',
      '{{x|"escaped end\\"}}',
      '{{#if}}',
      '{{#if a b}}',
      '{{#if a|"x"}}{{/if}}',
      '{{#each items}}',
      '{{#unless x}}',
      '{{/each}}',
      '{{else if x}}',
      '{{> partial}}',
      '{{name.upper()}}',
    ];
    for (const source of invalid) {
      const error = syntaxError(source);
      assert.equal(error.code, 'temple.invalid-expression', source);
      assert.equal(error.line, 1, source);
      assert.equal(error.column, 1, source);
    }
    assert.equal(
      syntaxError('{{first name}}').message,
      'Invalid variable name "first name": use letters, digits, "_" or "-", and "." between nested names',
    );
    assert.equal(syntaxError('{{#each items}}').message, 'Unknown block "#each": Temple has only {{#if name}}');
  });

  test('findTempleErrors lists every error in the order found; [] for a valid source', () => {
    assert.deepEqual(findTempleErrors('Hi {{ name | "there" }} {{#if a}}{{else}}{{/if}}'), []);
    assert.deepEqual(codes('{{a b}}\n{{else}}\n{{#if x}}{{else}}{{else}}{{/if}}{{/if}}\n{{#if y}}\n{{z'), [
      ['temple.invalid-expression', 1, 1],
      ['temple.unexpected-else', 2, 1],
      ['temple.unexpected-else', 3, 18],
      ['temple.unexpected-end', 3, 33],
      ['temple.unclosed-tag', 5, 1],
      ['temple.unclosed-if', 4, 1],
    ]);
    const [first] = findTempleErrors('x\n  {{#iff}}');
    assert.equal(first.offset, 4);
    assert.equal(first.length, 8);
    assert.equal(first.reason, 'Unknown block "#iff": Temple has only {{#if name}}');
  });

  test('parseTemple throws the first error findTempleErrors reports', () => {
    for (const source of ['{{a b}} {{/if}}', '{{#if a}} {{else}} {{else}}', 'x {{/if}} {{y']) {
      const [first] = findTempleErrors(source);
      assert.equal(syntaxError(source).message, first.message);
    }
  });

  test('long tags are quoted shortly in messages', () => {
    const error = syntaxError(`{{${'x y'.repeat(1000)}}}`);
    assert.ok(error.message.length < 200, error.message);
  });
});

describe('hostile input', () => {
  const depth = 100_000;

  test('100,000 nested ifs render without overflowing the stack', hostile, () => {
    const source = '{{#if a}}<'.repeat(depth) + '{{x}}' + '{{else}}-{{/if}}>'.repeat(depth);
    const all = text(source, { a: 1, x: 'X' });
    assert.equal(all, '<'.repeat(depth) + 'X' + '>'.repeat(depth));
    assert.equal(text(source, {}), '->', 'the outermost else, then the outermost closer');
  });

  test('100,000 unclosed ifs: a clear error, and findTempleErrors stops at its cap', hostile, () => {
    const source = '{{#if a}}'.repeat(depth);
    assert.equal(syntaxError(source).code, 'temple.unclosed-if');
    const errors = findTempleErrors(source);
    assert.equal(errors.length, MAX_REPORTED_ERRORS);
    assert.ok(errors.every((e) => e.code === 'temple.unclosed-if'));
  });

  test('100,000 stray closers and elses', hostile, () => {
    assert.equal(syntaxError('{{/if}}'.repeat(depth)).code, 'temple.unexpected-end');
    assert.equal(findTempleErrors('{{else}}'.repeat(depth)).length, MAX_REPORTED_ERRORS);
  });

  test('10 MB of plain text renders unchanged', hostile, () => {
    const source = 'Lorem ipsum { dolor } sit amet. '.repeat((10 * 1024 * 1024) / 32);
    assert.equal(html(source, { a: 1 }), source);
  });

  test('10 MB of tags renders', hostile, () => {
    const source = 'a {{x}} '.repeat((10 * 1024 * 1024) / 8);
    const out = html(source, { x: '<' });
    assert.equal(out, 'a &lt; '.repeat((10 * 1024 * 1024) / 8));
  });

  test('runs of braces, unclosed tags and unterminated quotes over megabytes', hostile, () => {
    const mb = 1024 * 1024;
    assert.equal(syntaxError('{'.repeat(10 * mb)).code, 'temple.unclosed-tag');
    assert.equal(syntaxError('{{' + 'x'.repeat(10 * mb)).code, 'temple.unclosed-tag');
    assert.equal(syntaxError('{{'.repeat(5 * mb) + '}}').code, 'temple.unclosed-tag');
    assert.equal(syntaxError('{{a|"'.repeat(2 * mb)).code, 'temple.unclosed-tag');
    assert.equal(syntaxError('{{a|"' + '\\'.repeat(10 * mb)).code, 'temple.unclosed-tag');
    assert.equal(syntaxError('{{ ' + ' '.repeat(10 * mb) + ' }}').code, 'temple.invalid-expression');
    assert.equal(syntaxError('{{a|"x"' + ' '.repeat(10 * mb) + 'x}}').code, 'temple.invalid-expression');
    for (const source of ['{'.repeat(10 * mb), '{{}}'.repeat(2 * mb), '}}{{'.repeat(2 * mb), '{{a|"}}'.repeat(mb)]) {
      assert.ok(findTempleErrors(source).length <= MAX_REPORTED_ERRORS);
    }
  });

  test('a huge default and a very long path', hostile, () => {
    const big = 'd'.repeat(5 * 1024 * 1024);
    assert.equal(text(`{{a|"${big}"}}`), big);
    const path = Array.from({ length: 10_000 }, () => 'a').join('.');
    let value: unknown = 'deep';
    for (let i = 0; i < 10_000; i++) value = { a: value };
    assert.equal(text(`{{${path}}}`, value), 'deep');
  });

  test('deeply nested arrays and cyclic values print without crashing', hostile, () => {
    let nested: unknown = ['x'];
    for (let i = 0; i < 100_000; i++) nested = [nested];
    assert.equal(text('[{{v}}]', { v: nested }), '[]');
    const cyclic: unknown[] = ['a'];
    cyclic.push(cyclic);
    assert.equal(text('{{v}}', { v: cyclic }).startsWith('a,a,'), true);
  });
});
