// The campaign personaliser: merge values built from a contact (blank fields left out so Temple
// defaults apply) rendered into a recipient's copy by the delivery engine's personalizeMessage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { campaignMergeValues } from '../../src/resources/campaigns/merge-values.ts';
import { personalizeMessage } from '../../src/resources/emails/delivery/personalize.ts';
import type { StoredMessage } from '../../src/resources/emails/content.ts';

let n = 0;
function copy(html: string, text: string, values: Record<string, unknown>) {
  const stored: StoredMessage = {
    from: { address: 'a@acme.test', name: '' },
    to: [],
    cc: [],
    bcc: [],
    reply_to: [],
    subject: 's',
    html,
    text,
    headers: {},
    attachments: [],
  };
  return personalizeMessage({ content_id: `emc_unit${n++}` }, stored, { to: 'x@example.org', values });
}

test('a default applies to a missing or blank first name, not to a present one', () => {
  const html = '<p>Hello {{first_name|"there"}},</p>';
  const text = 'Hello {{ first_name | "there" }}, {{last_name}}!';
  for (const first_name of [null, '', '   ']) {
    const out = copy(html, text, campaignMergeValues({ email: 'x@example.org', first_name, last_name: null, custom_fields: '{}' }));
    assert.equal(out.html, '<p>Hello there,</p>');
    assert.equal(out.text, 'Hello there, !');
  }
  const named = copy(html, text, campaignMergeValues({ email: 'x@example.org', first_name: 'Ann', last_name: 'Lee', custom_fields: '{}' }));
  assert.equal(named.html, '<p>Hello Ann,</p>');
  assert.equal(named.text, 'Hello Ann, Lee!');
  assert.deepEqual(named.to, [{ address: 'x@example.org', name: '' }]);
});

test('custom fields, email and unsubscribe_url; defaults and values HTML-escaped in HTML only', () => {
  const values = campaignMergeValues(
    { email: 'x@example.org', first_name: 'A<b>', last_name: null, custom_fields: '{"plan":"gold","city":"","n":0}' },
    'https://p.test/unsubscribe/t',
  );
  const out = copy(
    '{{first_name}} {{cf.plan|"free"}} {{cf.city|"nowhere"}} {{cf.n}} {{cf.missing|"<none>"}} {{email}} {{unsubscribe_url}}',
    '{{first_name}} {{cf.city|"nowhere"}} {{cf.missing|"<none>"}}',
    values,
  );
  assert.equal(out.html, 'A&lt;b&gt; gold nowhere 0 &lt;none&gt; x@example.org https://p.test/unsubscribe/t');
  assert.equal(out.text, 'A<b> nowhere <none>');
});

test('custom fields given parsed, or unreadable, and a body that is not a valid template is sent as written', () => {
  assert.deepEqual(campaignMergeValues({ email: 'e', first_name: 'F', last_name: '', custom_fields: { k: 'v' } }), {
    email: 'e',
    first_name: 'F',
    cf: { k: 'v' },
  });
  assert.deepEqual(campaignMergeValues({ email: 'e', first_name: null, last_name: null, custom_fields: 'not json' }).cf, {});
  const out = copy(
    'Hi {{first_name|there}}',
    'Hi {{#if}}',
    campaignMergeValues({ email: 'e', first_name: 'F', last_name: null, custom_fields: null }),
  );
  assert.equal(out.html, 'Hi {{first_name|there}}');
  assert.equal(out.text, 'Hi {{#if}}');
});
