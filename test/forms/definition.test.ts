// The definition vocabulary checked at publish, the checks of submitted fields and the
// embed script's targeting rules, as pure logic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { definitionProblems, MISSING_STEPS, starterDefinition, stepsFor, type Definition } from '../../src/resources/forms/definition.ts';
import { checkFields } from '../../src/resources/forms/fields.ts';
import { chooseVariant, onTargetedPage } from '../../src/resources/forms/embed/targeting.ts';

const starter = () => structuredClone(starterDefinition('popup')) as any;

/** The starter with `change` applied; the problems it has. */
function problemsAfter(change: (d: any) => void): string[] {
  const definition = starter();
  change(definition);
  return definitionProblems(definition);
}

test('the starter definition: a heading, a required email field and a Subscribe button, then a success step; publishable', () => {
  const definition = starterDefinition('flyout');
  assert.equal(definition.type, 'flyout');
  assert.deepEqual(
    definition.steps.map((s) => s.kind),
    ['form', 'success'],
  );
  const [heading, email, button] = definition.steps[0].blocks as any[];
  assert.deepEqual([heading.type, heading.level], ['text', 'heading']);
  assert.deepEqual([email.type, email.name, email.required], ['email', 'email', true]);
  assert.deepEqual([button.type, button.label, button.action], ['button', 'Subscribe', 'submit']);
  assert.deepEqual(definitionProblems(definition), []);
});

test('a definition without a form step or a success step has the one clear message', () => {
  assert.equal(definitionProblems({ version: 1, type: 'popup' })[0], MISSING_STEPS);
  assert.equal(definitionProblems({})[0], MISSING_STEPS);
  assert.deepEqual(definitionProblems(null), [MISSING_STEPS]);
  assert.equal(problemsAfter((d) => (d.steps = d.steps.slice(0, 1)))[0], MISSING_STEPS);
  assert.equal(problemsAfter((d) => (d.steps = d.steps.slice(1)))[0], MISSING_STEPS);
  assert.equal(problemsAfter((d) => (d.steps = 'steps'))[0], MISSING_STEPS);
});

test('the documented vocabulary: block types, button actions, inputs with name, label and required', () => {
  const cases: Array<[(d: any) => void, RegExp]> = [
    [
      (d) => (d.steps[0].blocks[0].type = 'video'),
      /steps\[0\]\.blocks\[0\]\.type must be one of text, button, image, email, text_input, phone, date, radio, checkbox, dropdown/,
    ],
    [(d) => (d.steps[0].blocks[2].action = 'subscribe'), /steps\[0\]\.blocks\[2\]\.action must be one of submit, next, close, go_to_url/],
    [(d) => delete d.steps[0].blocks[1].name, /steps\[0\]\.blocks\[1\]\.name must start with a letter/],
    [(d) => (d.steps[0].blocks[1].label = ''), /blocks\[1\]\.label must be a non-empty string/],
    [(d) => (d.steps[0].blocks[1].required = 'yes'), /blocks\[1\]\.required must be a boolean/],
    [(d) => d.steps[0].blocks.push({ id: 'e2', type: 'email', name: 'email', label: 'Again' }), /repeats the input name "email"/],
    [
      (d) => d.steps[0].blocks.push({ id: 'r', type: 'radio', name: 'size', label: 'Size' }),
      /blocks\[3\]\.options must be an array of 1 to 100 options/,
    ],
    [(d) => d.steps[0].blocks.push({ id: 'd', type: 'dropdown', name: 'c', label: 'C', options: ['a', 'a'] }), /repeats the value "a"/],
    [(d) => d.steps[0].blocks.push({ id: 'g', type: 'button', label: 'Go', action: 'go_to_url' }), /url must be an http or https URL/],
    [(d) => d.steps[0].blocks.push({ id: 'i', type: 'image', src: 'javascript:alert(1)', alt: '' }), /src must be an http or https URL/],
    [
      (d) => d.steps[0].blocks.push({ id: 'i', type: 'image', src: 'https://example.com/a.png', alt: '', href: 'https://example.com' }),
      /blocks\[3\]\.alt must describe the link of an image with an href/,
    ],
    [
      (d) => d.steps[1].blocks.push({ id: 'x', type: 'email', name: 'late', label: 'Late' }),
      /steps\[1\]\.blocks\[1\] is an input, and a success step has no inputs/,
    ],
    [
      (d) => d.steps[1].blocks.push({ id: 'x', type: 'button', label: 'Send', action: 'submit' }),
      /must be close or go_to_url in a success step/,
    ],
    [(d) => (d.steps[0].blocks[2].action = 'close'), /need a button with the submit action/],
    [(d) => (d.steps[1].kind = 'thanks'), /steps\[1\]\.kind must be one of form, success/],
    [(d) => (d.steps[1].id = 'form'), /repeats the step id "form"/],
    [(d) => (d.version = 2), /version must be 1/],
    [(d) => (d.styles = { button_color: 'red;}body{display:none' }), /styles\.button_color must be a CSS color/],
    [(d) => (d.styles = { width: 5000 }), /styles\.width must be a number from 200 to 1200/],
    [(d) => (d.targeting = { delay_seconds: -1 }), /targeting\.delay_seconds must be a number/],
    [(d) => (d.targeting = { frequency: { mode: 'every_n_days' } }), /targeting\.frequency\.days must be a whole number/],
    [(d) => (d.targeting = { pages: { include: [''] } }), /targeting\.pages\.include must be an array of URL path patterns/],
    [
      (d) =>
        (d.experiments = [
          { id: 'a', variants: [{ id: 'x', weight: 1 }] },
          { id: 'b', variants: [{ id: 'y', weight: 1 }] },
        ]),
      /experiments may hold one experiment at a time/,
    ],
    [(d) => (d.experiments = [{ id: 'a', variants: [{ id: 'x', weight: 0 }] }]), /experiments\[0\]\.variants need a positive weight/],
    [
      (d) => (d.experiments = [{ id: 'a', variants: [{ id: 'x', weight: 1, steps: [] }] }]),
      /experiments\[0\]\.variants\[0\]\.steps need at least one form step and one success step/,
    ],
  ];
  for (const [change, expected] of cases) {
    const problems = problemsAfter(change);
    assert.ok(
      problems.some((p) => expected.test(p)),
      `${expected}: got ${JSON.stringify(problems)}`,
    );
  }
});

test('every block type, action, style, targeting rule and an experiment together are publishable', () => {
  const definition: Definition = {
    version: 1,
    type: 'popup',
    steps: [
      {
        id: 'one',
        kind: 'form',
        blocks: [
          { id: 'h', type: 'text', level: 'heading', content: 'Join' },
          { id: 'img', type: 'image', src: 'https://example.com/a.png', alt: 'A cat', href: 'https://example.com' },
          { id: 'e', type: 'email', name: 'email', label: 'Email', required: true },
          { id: 'n', type: 'text_input', name: 'first_name', label: 'First name' },
          { id: 'p', type: 'phone', name: 'phone', label: 'Phone' },
          { id: 'next', type: 'button', label: 'Next', action: 'next' },
        ],
      },
      {
        id: 'two',
        kind: 'form',
        blocks: [
          { id: 'd', type: 'date', name: 'birthday', label: 'Birthday' },
          { id: 'r', type: 'radio', name: 'size', label: 'Size', options: ['S', { label: 'Medium', value: 'M' }] },
          { id: 'c', type: 'checkbox', name: 'consent', label: 'I agree', required: true },
          { id: 'cg', type: 'checkbox', name: 'topics', label: 'Topics', options: ['news', 'deals'] },
          { id: 'dd', type: 'dropdown', name: 'country', label: 'Country', options: ['FR', 'DE'] },
          { id: 's', type: 'button', label: 'Send', action: 'submit' },
          { id: 'x', type: 'button', label: 'No thanks', action: 'close' },
        ],
      },
      {
        id: 'ok',
        kind: 'success',
        blocks: [
          { id: 't', type: 'text', content: 'Thanks' },
          { id: 'go', type: 'button', label: 'Shop', action: 'go_to_url', url: 'https://example.com/shop', new_tab: true },
        ],
      },
    ],
    styles: {
      background_color: '#fffbeb',
      text_color: 'rgb(20 20 20)',
      button_color: 'darkgreen',
      font_family: 'Georgia, serif',
      font_size: 18,
      border_radius: 4,
      width: 500,
      position: 'bottom_left',
    },
    targeting: {
      delay_seconds: 5,
      scroll_percent: 50,
      exit_intent: true,
      pages: { include: ['/blog/*'], exclude: ['/blog/private'] },
      frequency: { mode: 'every_n_days', days: 7 },
    },
    experiments: [
      {
        id: 'headline',
        variants: [
          { id: 'a', weight: 1 },
          { id: 'b', weight: 3, styles: { button_color: '#7c3aed' } },
        ],
      },
    ],
  };
  assert.deepEqual(definitionProblems(definition), []);
  assert.equal(stepsFor(definition, 'b'), definition.steps);
});

test('submitted fields: required, email syntax, phone, calendar dates, option values, unknown names dropped', () => {
  const inputs: any[] = [
    { id: '1', type: 'email', name: 'email', label: 'Email', required: true },
    { id: '2', type: 'phone', name: 'phone', label: 'Phone' },
    { id: '3', type: 'date', name: 'birthday', label: 'Birthday' },
    { id: '4', type: 'radio', name: 'size', label: 'Size', options: ['S', { label: 'Medium', value: 'M' }] },
    { id: '5', type: 'dropdown', name: 'country', label: 'Country', options: ['FR'] },
    { id: '6', type: 'checkbox', name: 'consent', label: 'Consent', required: true },
    { id: '7', type: 'checkbox', name: 'topics', label: 'Topics', options: ['news', 'deals'] },
    { id: '8', type: 'text_input', name: 'name', label: 'Name' },
  ];
  const good = checkFields(inputs, {
    email: ' Ada@Example.COM ',
    phone: '+33 1 23 45 67 89',
    birthday: '2000-02-29',
    size: 'M',
    country: 'FR',
    consent: true,
    topics: ['news', 'news'],
    name: ' Ada ',
    extra: 'dropped',
  });
  assert.deepEqual(good, {
    fields: {
      email: 'ada@example.com',
      phone: '+33 1 23 45 67 89',
      birthday: '2000-02-29',
      size: 'M',
      country: 'FR',
      consent: true,
      topics: ['news'],
      name: 'Ada',
    },
    errors: {},
  });

  const bad = checkFields(inputs, {
    email: 'not an address',
    phone: 'call me',
    birthday: '2001-02-29',
    size: 'XL',
    country: 'US',
    consent: false,
    topics: ['spam'],
    name: 42,
  });
  assert.deepEqual(bad.errors, {
    email: ['Enter a valid email address'],
    phone: ['Enter a valid phone number'],
    birthday: ['Enter a date as YYYY-MM-DD'],
    size: ['Choose one of the options'],
    country: ['Choose one of the options'],
    consent: ['This field is required'],
    topics: ['Choose among the options'],
    name: ['Must be text'],
  });
  assert.deepEqual(checkFields(inputs, { email: '' }).errors, { email: ['This field is required'], consent: ['This field is required'] });
  // Names of Object.prototype are field names like any other, never inherited values.
  assert.deepEqual(checkFields([{ id: 'c', type: 'text_input', name: 'constructor', label: 'C', required: true }] as any, {}).errors, {
    constructor: ['This field is required'],
  });
});

test('targeting: page patterns with * and exclusions; variants drawn by weight', () => {
  const at = (href: string) => new URL(href) as unknown as Location;
  const targeting = { pages: { include: ['/blog/*', '/'], exclude: ['/blog/private*'] } };
  assert.equal(onTargetedPage(targeting, at('https://shop.example/blog/hello')), true);
  assert.equal(onTargetedPage(targeting, at('https://shop.example/')), true);
  assert.equal(onTargetedPage(targeting, at('https://shop.example/cart')), false);
  assert.equal(onTargetedPage(targeting, at('https://shop.example/blog/private/1')), false);
  assert.equal(onTargetedPage({ pages: { include: ['https://shop.example/a?x=*'] } }, at('https://shop.example/a?x=1')), true);
  assert.equal(onTargetedPage({}, at('https://shop.example/anything')), true);

  const definition = {
    ...starterDefinition('popup'),
    experiments: [
      {
        id: 'e',
        variants: [
          { id: 'a', weight: 1 },
          { id: 'b', weight: 3 },
          { id: 'never', weight: 0 },
        ],
      },
    ],
  };
  // Without storage (as in Node) nothing is kept, so each draw is fresh.
  const pick = (r: number) => chooseVariant('tok', definition, () => r)?.variantId;
  assert.deepEqual([pick(0), pick(0.24), pick(0.25), pick(0.99)], ['a', 'a', 'b', 'b']);
  assert.equal(chooseVariant('tok', starterDefinition('popup')), null);
});
