// The MJML tools and MJML templates over HTTP (https://emailit.com/docs/templates/mjml.md). The
// checker itself is unit-tested in test/mjml/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'parse5';
import { startTestApp, type TestApp, type ApiClient } from './helpers/app.ts';

let app: TestApp;
/** A workspace the operator gave the `mjml` feature. */
let mjml: ApiClient;
before(async () => {
  app = await startTestApp();
  mjml = (await app.newWorkspace({ features: ['mjml'] })).api;
});
after(() => app.close());

const MJML_VERSION = '5.4.1';
const ALPHA = {
  error: 'mjml_alpha',
  message: 'MJML is in alpha and is not enabled for this workspace; ask the operator for the mjml feature.',
};

const GOOD = `<mjml lang="en">
  <mj-head>
    <mj-title>Welcome</mj-title>
    <mj-preview>Hello there</mj-preview>
    <mj-attributes><mj-all font-family="Arial" /><mj-class name="blue" color="blue" /><mj-text font-size="14px" /></mj-attributes>
    <mj-style>.note { color: #555555; }</mj-style>
  </mj-head>
  <mj-body background-color="#f4f4f4">
    <mj-section>
      <mj-column>
        <mj-image src="https://example.test/logo.png" alt="Logo" width="120px" />
        <mj-text mj-class="blue">Hello {{first_name|"there"}}, {{#if vip}}<b>VIP</b>{{else}}friend{{/if}}</mj-text>
        <mj-button href="https://example.test/confirm/{{token}}" background-color="{{brand_color}}">Confirm</mj-button>
        <mj-divider /><mj-spacer height="10px" />
        <mj-table><tr><td>Item</td><td>{{price}}</td></tr></mj-table>
        <mj-social><mj-social-element name="facebook" href="https://facebook.com/acme">Facebook</mj-social-element></mj-social>
        <mj-navbar><mj-navbar-link href="/shop">Shop</mj-navbar-link></mj-navbar>
      </mj-column>
    </mj-section>
  </mj-body>
</mjml>`;

// Lines and columns below are 1-based; count them on this text.
const BROKEN = `<mjml>
  <mj-head>
    <mj-preview>Preview</mj-preview>
  </mj-head>
  <mj-body>
    <mj-column>
      <mj-text colour="red">Hi {{name</mj-text>
    </mj-column>
    <mj-section padding="wide">
      <mj-column>
        <mj-image src="a.png">
      </mj-column>
    </mj-section>
  </mj-body>
</mjml>`;

const brief = (diagnostics: any[]) =>
  diagnostics.map((d) => [
    d.severity,
    d.code,
    d.line ?? null,
    d.column ?? null,
    d.path ? d.path.join('.') : null,
    d.tag ?? null,
    d.attribute ?? null,
  ]);

test('without the mjml feature every request is 403 mjml_alpha, whatever its body', async () => {
  const requests = [
    () => app.api.post('/v2/mjml/validate', { source: GOOD }),
    () => app.api.post('/v2/mjml/validate', {}),
    () => app.api.post('/v2/mjml/validate'),
    () => app.api.post('/v2/mjml/render', { source: GOOD, variables: 'not an object' }),
    () => app.api.get('/v2/mjml/reference'),
    () => app.api.post('/v2/templates', { name: 'M', alias: 'm', editor: 'mjml', source: GOOD }),
  ];
  for (const request of requests) {
    const res = await request();
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, ALPHA);
  }
  assert.equal((await app.as(null).get('/v2/mjml/reference')).status, 401);
});

test('validate: a broken document gets stable codes, 1-based positions and paths; 200 with valid false', async () => {
  const res = await mjml.post('/v2/mjml/validate', { source: BROKEN });
  assert.equal(res.status, 200);
  assert.deepEqual(Object.keys(res.body).sort(), ['diagnostics', 'format', 'mjml_version', 'valid']);
  assert.equal(res.body.valid, false);
  assert.equal(res.body.format, 'markup');
  assert.equal(res.body.mjml_version, MJML_VERSION);
  assert.deepEqual(brief(res.body.diagnostics), [
    ['warning', 'mjml.missing-title', 2, 3, '0', 'mj-head', null],
    ['error', 'mjml.invalid-child', 6, 5, '1.0', 'mj-column', null],
    ['error', 'mjml.unknown-attribute', 7, 16, '1.0.0', 'mj-text', 'colour'],
    ['error', 'temple.unclosed-tag', 7, 32, null, null, null],
    ['error', 'mjml.invalid-attribute-value', 9, 17, '1.1', 'mj-section', 'padding'],
    ['error', 'xml.unclosed-tag', 11, 9, '1.1.0.0', 'mj-image', null],
  ]);
  for (const d of res.body.diagnostics) {
    assert.equal(typeof d.message, 'string');
    assert.ok(d.message.length > 0);
  }
  assert.deepEqual(res.body.diagnostics[1], {
    severity: 'error',
    code: 'mjml.invalid-child',
    message: '<mj-column> cannot be used inside <mj-body>, only inside: mj-group, mj-section',
    line: 6,
    column: 5,
    tag: 'mj-column',
    path: [1, 0],
  });
});

test('validate: a good document is valid (warnings and infos do not count); JSON and stored documents; unrecognized sources', async () => {
  const good = await mjml.post('/v2/mjml/validate', { source: GOOD });
  assert.deepEqual(good.body, { valid: true, mjml_version: MJML_VERSION, format: 'markup', diagnostics: [] });

  const minimal = await mjml.post('/v2/mjml/validate', { source: '<mjml><mj-body></mj-body></mjml>' });
  assert.equal(minimal.body.valid, true);
  assert.deepEqual(
    minimal.body.diagnostics.map((d: any) => [d.severity, d.code]),
    [
      ['warning', 'mjml.missing-title'],
      ['info', 'mjml.missing-preview'],
    ],
  );

  const tree = { tagName: 'mjml', attributes: {}, children: [{ tagName: 'mj-body', children: [{ tagName: 'mj-text', content: 'Hi' }] }] };
  const json = await mjml.post('/v2/mjml/validate', { source: tree });
  assert.equal(json.body.format, 'json');
  assert.equal(json.body.valid, false);
  assert.deepEqual(
    json.body.diagnostics.find((d: any) => d.severity === 'error'),
    {
      severity: 'error',
      code: 'mjml.invalid-child',
      message: '<mj-text> cannot be used inside <mj-body>, only inside: mj-column, mj-hero',
      tag: 'mj-text',
      path: [0, 0],
    },
  );
  assert.equal((await mjml.post('/v2/mjml/validate', { source: JSON.stringify(tree) })).body.format, 'json', 'JSON text is JSON');

  const stored = await mjml.post('/v2/mjml/validate', { source: { document_schema_version: 1, content: GOOD } });
  assert.deepEqual(stored.body, { valid: true, mjml_version: MJML_VERSION, format: 'markup', diagnostics: [] });
  const future = await mjml.post('/v2/mjml/validate', { source: { document_schema_version: 99, content: GOOD } });
  assert.deepEqual(
    future.body.diagnostics.map((d: any) => d.code),
    ['document.unsupported-version'],
  );

  for (const source of ['Hello there', { hello: 'world' }, '<html><body>Hi</body></html>']) {
    const res = await mjml.post('/v2/mjml/validate', { source });
    assert.equal(res.status, 200);
    assert.equal(res.body.valid, false);
    assert.deepEqual(
      res.body.diagnostics.map((d: any) => d.code),
      ['document.unrecognized'],
      JSON.stringify(source),
    );
  }
  assert.equal((await mjml.post('/v2/mjml/validate', { source: 'Hello there' })).body.format, null);
});

test('validate and render: a missing, blank or oversized source is 422 {message, errors.source}', async () => {
  for (const path of ['/v2/mjml/validate', '/v2/mjml/render']) {
    for (const body of [{}, { source: '' }, { source: '   ' }, { source: null }, undefined]) {
      const res = await mjml.post(path, body);
      assert.equal(res.status, 422, `${path} ${JSON.stringify(body)}`);
      assert.deepEqual(res.body, { message: 'Validation failed', errors: { source: ['The source field is required.'] } });
    }
    const wrongType = await mjml.post(path, { source: 42 });
    assert.deepEqual(
      [wrongType.status, wrongType.body],
      [422, { message: 'Validation failed', errors: { source: ['The source must be a string or an object.'] } }],
    );
    const big = `<mjml><mj-body><mj-raw>${'x'.repeat(2 * 1024 * 1024)}</mj-raw></mj-body></mjml>`;
    const tooBig = await mjml.post(path, { source: big });
    assert.deepEqual(
      [tooBig.status, tooBig.body],
      [422, { message: 'Validation failed', errors: { source: ['The source may not be greater than 2 MB.'] } }],
    );
  }
});

test('render: compiled HTML (variable tags kept) that a real HTML parser accepts; rendered_html only when variables are sent', async () => {
  const res = await mjml.post('/v2/mjml/render', { source: GOOD });
  assert.equal(res.status, 200);
  assert.deepEqual(Object.keys(res.body).sort(), ['diagnostics', 'html', 'html_bytes', 'mjml_version', 'valid']);
  assert.equal(res.body.valid, true);
  assert.equal(res.body.html_bytes, Buffer.byteLength(res.body.html, 'utf8'));
  assert.match(res.body.html, /^<!doctype html>/i);
  assert.ok(res.body.html.includes('Hello {{first_name|"there"}}'), 'variable tags are left in place');
  assert.ok(res.body.html.includes('href="https://example.test/confirm/{{token}}"'));
  assert.ok(res.body.html.includes('<title>Welcome</title>'));
  const parseErrors: string[] = [];
  parse(res.body.html, { onParseError: (error) => parseErrors.push(`${error.code} at ${error.startLine}:${error.startCol}`) });
  assert.deepEqual(parseErrors, [], 'parse5 (the WHATWG HTML parser) reports no error');

  const withVars = await mjml.post('/v2/mjml/render', { source: GOOD, variables: { vip: true, token: 'abc', first_name: '<Ann>' } });
  assert.equal(withVars.body.html, res.body.html);
  const rendered: string = withVars.body.rendered_html;
  assert.ok(rendered.includes('Hello &lt;Ann&gt;, <b>VIP</b>'), 'values are HTML-escaped, conditionals applied');
  assert.ok(rendered.includes('href="https://example.test/confirm/abc"'));
  assert.ok(!rendered.includes('{{'), 'nothing is left unrendered');
  const noVars = await mjml.post('/v2/mjml/render', { source: GOOD, variables: {} });
  assert.ok(noVars.body.rendered_html.includes('Hello there, friend'), 'missing variables render as their default or empty');

  const broken = await mjml.post('/v2/mjml/render', { source: BROKEN, variables: { name: 'x' } });
  assert.equal(broken.status, 200);
  assert.deepEqual([broken.body.valid, broken.body.html, broken.body.html_bytes, broken.body.rendered_html], [false, null, 0, null]);
  assert.equal(broken.body.diagnostics.length, 6);

  for (const variables of ['x', [1, 2], null, 3]) {
    const bad = await mjml.post('/v2/mjml/render', { source: GOOD, variables });
    assert.equal(bad.status, 400, JSON.stringify(variables));
    assert.equal(bad.body.error, 'Bad Request');
    assert.ok(Array.isArray(bad.body.details));
  }
});

test('reference: 36 components with tag, label, description, category, ending_tag, parents, children, attributes', async () => {
  const res = await mjml.get('/v2/mjml/reference');
  assert.equal(res.status, 200);
  const ref = res.body;
  assert.deepEqual(Object.keys(ref).sort(), [
    'components',
    'document_schema_version',
    'editors',
    'mjml_version',
    'reference_text',
    'rules',
    'temple_guide',
  ]);
  assert.equal(ref.mjml_version, MJML_VERSION);
  assert.equal(ref.document_schema_version, 1);
  assert.deepEqual(Object.keys(ref.editors).sort(), ['mjml-code', 'mjml-visual']);
  for (const editor of Object.values(ref.editors) as any[])
    assert.ok(['alpha', 'beta', 'stable'].includes(editor.stage) && typeof editor.version === 'string');
  for (const key of ['reference_text', 'rules', 'temple_guide']) assert.ok(typeof ref[key] === 'string' && ref[key].length > 0);
  assert.equal(ref.components.length, 36);
  assert.equal(new Set(ref.components.map((c: any) => c.tag)).size, 36);
  const categories = new Set(['root', 'head', 'layout', 'content', 'interactive', 'child', 'advanced']);
  for (const c of ref.components) {
    assert.deepEqual(Object.keys(c).sort(), ['attributes', 'category', 'children', 'description', 'ending_tag', 'label', 'parents', 'tag']);
    assert.ok(categories.has(c.category), c.tag);
    assert.equal(typeof c.ending_tag, 'boolean');
    for (const a of c.attributes) assert.deepEqual(Object.keys(a).sort(), ['default', 'name', 'type']);
  }
  const byTag = Object.fromEntries(ref.components.map((c: any) => [c.tag, c]));
  assert.deepEqual(byTag['mjml'].parents, []);
  assert.deepEqual(byTag['mj-section'].parents, ['mj-body', 'mj-wrapper']);
  assert.deepEqual(byTag['mj-attributes'].children, ['*']);
  assert.equal(byTag['mj-text'].ending_tag, true);
  assert.equal(byTag['mj-column'].ending_tag, false);
  assert.deepEqual(
    byTag['mj-button'].attributes.find((a: any) => a.name === 'background-color'),
    { name: 'background-color', type: 'color', default: '#414141' },
  );
  assert.deepEqual(
    byTag['mj-image'].attributes.find((a: any) => a.name === 'src'),
    { name: 'src', type: 'string', default: null },
  );
});

test('render limit: 120 per minute per workspace, then 429 with retry-after', async () => {
  const { api } = await app.newWorkspace({ features: ['mjml'] });
  const source = '<mjml></mjml>'; // cheap: invalid, never compiled, still counted
  const statuses = await Promise.all(Array.from({ length: 120 }, () => api.post('/v2/mjml/render', { source }).then((r) => r.status)));
  assert.deepEqual(new Set(statuses), new Set([200]));
  const limited = await api.post('/v2/mjml/render', { source });
  assert.equal(limited.status, 429);
  assert.equal(limited.body.error, 'Rate limit exceeded');
  assert.equal(limited.body.limit, 120);
  assert.ok(limited.body.retry_after >= 1 && limited.body.retry_after <= 60);
  assert.equal(limited.headers.get('retry-after'), String(limited.body.retry_after));
  assert.equal((await api.post('/v2/mjml/validate', { source })).status, 200, 'validate is not limited');
  assert.equal((await mjml.post('/v2/mjml/render', { source })).status, 200, 'other workspaces keep their own budget');
});

test('MJML templates: source compiled to html, invalid MJML is 422 with errors.source and diagnostics', async () => {
  const created = await mjml.post('/v2/templates', {
    name: 'Welcome',
    alias: 'welcome-mjml',
    editor: 'mjml',
    source: GOOD,
    html: '<p>ignored</p>',
    subject: 'Hi {{first_name}}',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const t = created.body.data;
  assert.equal(t.editor, 'mjml');
  assert.equal(t.source, GOOD, 'the source is stored as sent');
  assert.match(t.html, /^<!doctype html>/i);
  assert.ok(t.html.includes('Hello {{first_name|"there"}}'));
  assert.deepEqual(t.mjml, {
    document_schema_version: 1,
    mjml_version: MJML_VERSION,
    format: 'markup',
    compiled_at: t.created_at,
    warnings: 0,
  });

  const invalid = await mjml.post('/v2/templates', { name: 'Broken', alias: 'broken', editor: 'mjml', source: BROKEN });
  assert.equal(invalid.status, 422);
  assert.deepEqual(Object.keys(invalid.body).sort(), ['diagnostics', 'errors', 'message']);
  assert.equal(invalid.body.message, 'Validation failed');
  assert.deepEqual(invalid.body.errors.source, [
    'Line 6, column 5: <mj-column> cannot be used inside <mj-body>, only inside: mj-group, mj-section',
    'Line 7, column 16: Attribute colour is not allowed on <mj-text>',
    `Line 7, column 32: ${invalid.body.diagnostics[3].message}`,
    `Line 9, column 17: ${invalid.body.diagnostics[4].message}`,
    'Line 11, column 9: <mj-image> is never closed',
  ]);
  assert.equal(invalid.body.diagnostics.length, 6);
  const missing = await mjml.post('/v2/templates', { name: 'Empty', alias: 'empty', editor: 'mjml' });
  assert.deepEqual(
    [missing.status, missing.body],
    [422, { message: 'Validation failed', errors: { source: ['The source field is required.'] }, diagnostics: [] }],
  );

  // Updates: a new source recompiles; a sent html is ignored; the draft/publish state stays.
  const updated = await mjml.post(`/v2/templates/${t.id}`, { source: GOOD.replace('Confirm', 'Confirm now'), html: '<p>ignored</p>' });
  assert.equal(updated.status, 200);
  assert.ok(updated.body.data.html.includes('Confirm now'));
  assert.equal(updated.body.data.published_at, t.published_at);
  const badUpdate = await mjml.post(`/v2/templates/${t.id}`, { source: BROKEN });
  assert.equal(badUpdate.status, 422);
  assert.ok((await mjml.get(`/v2/templates/${t.id}`)).body.data.html.includes('Confirm now'), 'a failed update changes nothing');

  // Switching an HTML template to MJML compiles its existing source.
  const plain = await mjml.post('/v2/templates', { name: 'Plain', alias: 'plain', source: GOOD, html: '<p>old</p>' });
  assert.equal(plain.body.data.html, '<p>old</p>');
  const switched = await mjml.post(`/v2/templates/${plain.body.data.id}`, { editor: 'mjml' });
  assert.equal(switched.status, 200);
  assert.match(switched.body.data.html, /^<!doctype html>/i);
  const listed = await mjml.get('/v2/templates?filter[editor]=mjml&include_content=true');
  assert.deepEqual(listed.body.data.map((x: any) => x.alias).sort(), ['plain', 'welcome-mjml']);
  assert.equal(listed.body.data[0].source, GOOD);
});

test('MJML templates without access: rename and publish work, content changes are 403 mjml_alpha', async () => {
  const { workspace, api } = await app.newWorkspace({ features: ['mjml'] });
  const t = (await api.post('/v2/templates', { name: 'News', alias: 'news', editor: 'mjml', source: GOOD })).body.data;
  const draft = (await api.post('/v2/templates', { name: 'News 2', alias: 'news', editor: 'mjml', source: GOOD })).body.data;
  // The operator takes the feature away.
  await app.running.ctx.db.updateTable('workspaces').set({ features: '[]' }).where('id', '=', workspace.id).execute();

  assert.equal((await api.post(`/v2/templates/${t.id}`, { name: 'News (renamed)', alias: 'news-renamed', subject: 'Hello' })).status, 200);
  assert.equal((await api.post(`/v2/templates/${draft.id}/publish`)).status, 200);
  for (const body of [{ source: GOOD }, { html: '<p>x</p>' }, { text: 'x' }, { editor: 'html' }]) {
    const res = await api.post(`/v2/templates/${t.id}`, body);
    assert.equal(res.status, 403, JSON.stringify(body));
    assert.deepEqual(res.body, ALPHA);
  }
  assert.equal((await api.get(`/v2/templates/${t.id}`)).status, 200);
  assert.equal((await api.delete(`/v2/templates/${t.id}`)).status, 200);
  // An HTML template cannot become MJML without access either.
  const html = (await api.post('/v2/templates', { name: 'H', alias: 'h', html: '<p>h</p>' })).body.data;
  assert.deepEqual((await api.post(`/v2/templates/${html.id}`, { editor: 'mjml', source: GOOD })).body, ALPHA);
});
