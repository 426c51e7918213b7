// The embed script in real Chromium: a page on its own loopback server places the workspace's
// script; live forms appear as their targeting says, visitors fill and submit them with the
// mouse or the keyboard alone, the API lists what they sent. Each form type is scanned with
// axe-core and kept as a screenshot in test-artifacts/forms/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import axe from 'axe-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type ApiClient, type TestApp } from '../helpers/app.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { starterDefinition } from '../../src/resources/forms/definition.ts';
import { createLiveForm, startSite, type SitePage } from './helpers.ts';

const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'forms');

let app: TestApp;
let browser: Browser;
before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  app = await startTestApp();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

interface Visit {
  page: Page;
  context: BrowserContext;
  site: SitePage;
  /** Uncaught errors and console errors of the page: the script must fail silently. */
  errors: string[];
  /** Every URL the page requested from Postlane. */
  requests: string[];
  close(): Promise<void>;
}

/** A fresh visitor (own storage and cache) on a page of a site that embeds `api`'s workspace script. */
async function visit(
  api: ApiClient,
  options: { path?: string; content?: string; context?: BrowserContext; site?: SitePage } = {},
): Promise<Visit> {
  const site = options.site ?? (await siteFor(api, options.content));
  const context = options.context ?? (await browser.newContext({ viewport: { width: 1024, height: 700 } }));
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 40\d/.test(message.text())) errors.push(message.text());
  });
  page.on('request', (request) => {
    if (request.url().startsWith(app.url)) requests.push(request.url());
  });
  await page.goto(`${site.url}${options.path ?? '/'}`);
  return {
    page,
    context,
    site,
    errors,
    requests,
    async close() {
      await page.close();
      if (!options.context) await context.close();
      if (!options.site) await site.close();
    },
  };
}

async function siteFor(api: ApiClient, content?: string): Promise<SitePage> {
  const key = (await api.get('/v2/forms/embed')).body.public_key;
  return startSite(`${app.url}/js/${key}/postlane.js`, content);
}

/** Waits until the page has been quiet for a while: every form the script loaded was decided on. */
const settled = (page: Page) => page.waitForLoadState('networkidle');
const hosts = (page: Page) => page.locator('[data-postlane]').count();

/** What has the focus inside the forms' shadow roots: a field's name, a button's label, or a class. */
function focused(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const active = document.activeElement;
    const inner = active?.shadowRoot?.activeElement ?? null;
    if (!inner) return active && active !== document.body ? `page:${active.id}` : null;
    return (
      inner.getAttribute('name') ??
      inner.getAttribute('aria-label') ??
      (inner.tagName === 'BUTTON' ? inner.textContent!.trim() : inner.className)
    );
  });
}

async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: axe.source });
  const violations = await page.evaluate(async () => (await (window as any).axe.run(document, { resultTypes: ['violations'] })).violations);
  return violations
    .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
    .map((v: any) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n: any) => JSON.stringify(n.target)).join(', ')}`);
}

test('the live popup appears after its delay; a visitor fills and submits it; the API lists the submission', async () => {
  const { api } = await app.newWorkspace();
  const definition = { ...starterDefinition('popup'), targeting: { delay_seconds: 2 } };
  const form = await createLiveForm(api, { name: 'Delayed', type: 'popup', definition });
  const key = (await api.get('/v2/forms/embed')).body.public_key;
  const site = await startSite(`${app.url}/js/${key}/postlane.js`);
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // When the form's frame joins the page, by the page's own clock.
  await page.addInitScript(() => {
    new MutationObserver((_m, observer) => {
      if (document.querySelector('[data-postlane]')) {
        (window as any).shownAt = performance.now();
        observer.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  });
  const loaded = page.waitForResponse((r) => r.url() === `${app.url}/v2/forms/${form.token}`);
  await page.goto(site.url);
  assert.equal((await loaded).status(), 200);
  assert.equal(await hosts(page), 0, 'not shown before its delay');

  const dialog = page.getByRole('dialog', { name: 'Subscribe to our newsletter' });
  await dialog.waitFor();
  const [loadedAt, shownAt] = await page.evaluate(
    (token) => [
      (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).find((e) => e.name.endsWith(`/v2/forms/${token}`))!
        .responseEnd,
      (window as any).shownAt,
    ],
    form.token,
  );
  assert.ok(shownAt - loadedAt >= 1990, `shown ${Math.round(shownAt - loadedAt)} ms after its definition arrived, delay 2 s`);
  assert.equal(await dialog.getAttribute('aria-modal'), 'true');

  await page.getByLabel('Email address').fill('visitor@example.com');
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await page.getByRole('heading', { name: 'Thanks for subscribing!' }).waitFor();

  const listed = await api.get(`/v2/forms/${form.id}/submissions`);
  assert.equal(listed.body.total_records, 1);
  assert.deepEqual(listed.body.data[0].fields, { email: 'visitor@example.com' });
  assert.equal(listed.body.data[0].page_url, `${site.url}/`);
  assert.deepEqual(errors, []);
  await context.close();
  await site.close();
});

test('a draft form never appears, inline or as a popup; published, it does', async () => {
  const { api } = await app.newWorkspace();
  const draftPopup = (await api.post('/v2/forms', { name: 'Draft popup', type: 'popup' })).body;
  const draftInline = (await api.post('/v2/forms', { name: 'Draft inline', type: 'embed' })).body;
  await createLiveForm(api, { name: 'Live flyout', type: 'flyout' });
  const content = `<div id="slot" data-postlane-form="${draftInline.token}"></div>`;
  const first = await visit(api, { content });
  await first.page.getByRole('dialog').waitFor(); // the live flyout: the script ran
  await settled(first.page);
  assert.equal(await hosts(first.page), 1);
  assert.equal(await first.page.getByRole('dialog').getAttribute('aria-modal'), 'false');
  assert.equal(await first.page.locator('#slot').evaluate((slot) => slot.childElementCount), 0);
  assert.ok(!first.requests.some((url) => url.includes(draftPopup.token) || url.includes(draftInline.token)), first.requests.join('\n'));
  assert.deepEqual(first.errors, []);
  await first.close();

  await api.post(`/v2/forms/${draftPopup.id}/publish`);
  await api.post(`/v2/forms/${draftInline.id}/publish`);
  const second = await visit(api, { content });
  await second.page.getByRole('dialog', { name: 'Subscribe to our newsletter' }).and(second.page.locator('[aria-modal=true]')).waitFor();
  await second.page.locator('#slot').getByRole('region').waitFor();
  await second.close();
});

test('keyboard only: focus moves in and is trapped, errors are announced, Enter submits, Escape closes and focus returns', async () => {
  const { api } = await app.newWorkspace();
  const form = await createLiveForm(api, {
    name: 'Keys',
    type: 'popup',
    definition: { ...starterDefinition('popup'), targeting: { delay_seconds: 1 } },
  });
  const { page, errors, close } = await visit(api);
  await page.focus('#outside');
  await page.getByRole('dialog').waitFor();
  assert.equal(await focused(page), 'email', 'focus moved into the dialog');

  // Tab goes round the dialog and never leaves it, both ways.
  const order: Array<string | null> = [];
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press('Tab');
    order.push(await focused(page));
  }
  assert.deepEqual(order, ['Subscribe', 'Close', 'email', 'Subscribe']);
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await focused(page), 'Close');
  await page.keyboard.press('Tab');
  assert.equal(await focused(page), 'email');

  // An empty or wrong address: the error is tied to the field and announced.
  const email = page.getByLabel('Email address');
  const live = page.getByRole('status');
  await page.keyboard.press('Enter');
  await assertError(page, 'This field is required');
  await page.keyboard.type('not-an-address');
  await page.keyboard.press('Enter');
  await assertError(page, 'Enter a valid email address');
  assert.equal(await focused(page), 'email');

  await page.keyboard.press('Control+A');
  await page.keyboard.type('keys@example.com');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Thanks for subscribing!' }).waitFor();
  await live.filter({ hasText: 'Thanks for subscribing!' }).waitFor();
  assert.equal(await email.count(), 0);
  assert.equal(await focused(page), 'ok', 'focus on the success message');

  await page.keyboard.press('Escape');
  assert.equal(await hosts(page), 0, 'closed');
  assert.equal(await focused(page), 'page:outside', 'focus back where it was');
  assert.equal((await api.get(`/v2/forms/${form.id}/submissions`)).body.data[0].fields.email, 'keys@example.com');
  assert.deepEqual(errors, []);
  await close();

  async function assertError(page: Page, message: string) {
    await page.getByText(message, { exact: true }).waitFor();
    assert.equal(await email.getAttribute('aria-invalid'), 'true');
    const describedBy = (await email.getAttribute('aria-describedby'))!;
    assert.equal(await page.locator(`#${describedBy}`).textContent(), message);
    await live.filter({ hasText: message }).waitFor();
  }
});

test('every block type and the steps: next, submit, close and go_to_url; styles applied; the API lists every field', async () => {
  const { api } = await app.newWorkspace();
  const site = await siteFor(api);
  const image = `${site.url}/logo.png`;
  const definition = {
    version: 1,
    steps: [
      {
        id: 'about-you',
        kind: 'form',
        blocks: [
          { id: 'h', type: 'text', level: 'heading', content: 'Join the club' },
          { id: 'intro', type: 'text', content: 'Two short steps.' },
          { id: 'logo', type: 'image', src: image, alt: 'Club logo' },
          { id: 'e', type: 'email', name: 'email', label: 'Email', required: true },
          { id: 'n', type: 'text_input', name: 'first_name', label: 'First name' },
          { id: 'p', type: 'phone', name: 'phone', label: 'Phone' },
          { id: 'next', type: 'button', label: 'Continue', action: 'next' },
        ],
      },
      {
        id: 'preferences',
        kind: 'form',
        blocks: [
          { id: 'd', type: 'date', name: 'birthday', label: 'Birthday' },
          { id: 'r', type: 'radio', name: 'size', label: 'Shirt size', required: true, options: ['S', { label: 'Medium', value: 'M' }] },
          { id: 'c', type: 'checkbox', name: 'consent', label: 'I agree to receive emails', required: true },
          {
            id: 'cg',
            type: 'checkbox',
            name: 'topics',
            label: 'Topics',
            options: [
              { label: 'News', value: 'news' },
              { label: 'Deals', value: 'deals' },
            ],
          },
          {
            id: 'dd',
            type: 'dropdown',
            name: 'country',
            label: 'Country',
            options: [
              { label: 'France', value: 'FR' },
              { label: 'Germany', value: 'DE' },
            ],
          },
          { id: 's', type: 'button', label: 'Join', action: 'submit' },
          { id: 'x', type: 'button', label: 'No thanks', action: 'close' },
        ],
      },
      {
        id: 'done',
        kind: 'success',
        blocks: [
          { id: 't', type: 'text', level: 'heading', content: 'Welcome aboard' },
          { id: 'go', type: 'button', label: 'Visit the shop', action: 'go_to_url', url: 'https://shop.example/new' },
        ],
      },
    ],
    styles: {
      background_color: '#fffbeb',
      text_color: '#1c1917',
      button_color: 'rgb(21, 128, 61)',
      button_text_color: '#ffffff',
      border_radius: 4,
      width: 520,
    },
  };
  const form = await createLiveForm(api, { name: 'Club', type: 'popup', definition });
  const { page, errors, close } = await visit(api, { site });
  const dialog = page.getByRole('dialog', { name: 'Join the club' });
  await dialog.waitFor();
  await page.getByText('Two short steps.').waitFor();
  assert.equal(await page.getByRole('img', { name: 'Club logo' }).getAttribute('src'), image);
  const continueButton = page.getByRole('button', { name: 'Continue' });
  assert.equal(await continueButton.evaluate((b) => getComputedStyle(b).backgroundColor), 'rgb(21, 128, 61)');
  assert.equal(
    await page.locator('.p').evaluate((p) => [getComputedStyle(p).backgroundColor, getComputedStyle(p).borderTopLeftRadius].join(' ')),
    'rgb(255, 251, 235) 4px',
  );

  // `next` checks its own step first.
  await continueButton.click();
  await page.getByText('This field is required', { exact: true }).waitFor();
  assert.equal(await page.getByLabel('Birthday').isVisible(), false);
  await page.getByRole('textbox', { name: 'Email', exact: true }).fill('club@example.com');
  await page.getByLabel('First name').fill('Ada');
  await page.getByLabel('Phone').fill('+33 1 23 45 67 89');
  await continueButton.click();
  await page.getByLabel('Birthday').waitFor();
  assert.equal(await page.getByRole('textbox', { name: 'Email', exact: true }).isVisible(), false);

  await page.getByLabel('Birthday').fill('1990-05-17');
  await page.getByRole('group', { name: 'Shirt size' }).getByLabel('Medium').check();
  await page.getByLabel('I agree to receive emails').check();
  await page.getByRole('group', { name: 'Topics' }).getByLabel('Deals').check();
  await page.getByLabel('Country').selectOption('DE');
  await page.getByRole('button', { name: 'Join' }).click();
  await page.getByRole('heading', { name: 'Welcome aboard' }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'Visit the shop' }).getAttribute('href'), 'https://shop.example/new');

  const [submission] = (await api.get(`/v2/forms/${form.id}/submissions`)).body.data;
  assert.deepEqual(submission.fields, {
    email: 'club@example.com',
    first_name: 'Ada',
    phone: '+33 1 23 45 67 89',
    birthday: '1990-05-17',
    size: 'M',
    consent: true,
    topics: ['deals'],
    country: 'DE',
  });
  assert.deepEqual(errors, []);
  await close();

  // The close action: the form goes away.
  const again = await visit(api, { site });
  await again.page.getByRole('textbox', { name: 'Email', exact: true }).fill('x@example.com');
  await again.page.getByRole('button', { name: 'Continue' }).click();
  await again.page.getByRole('button', { name: 'No thanks' }).click();
  assert.equal(await hosts(again.page), 0);
  await again.close();
  await site.close();
});

test('each form type renders, passes an axe-core scan (no serious or critical violation) and is kept as a screenshot', async () => {
  for (const type of ['popup', 'full_page', 'flyout', 'banner', 'embed'] as const) {
    const { api } = await app.newWorkspace();
    const form = await createLiveForm(api, { name: type, type });
    const content = type === 'embed' ? `<section aria-label="Newsletter"><div data-postlane-form="${form.token}"></div></section>` : '';
    const { page, errors, close } = await visit(api, { content });
    const frame =
      type === 'banner' || type === 'embed'
        ? page.getByRole('region', { name: 'Subscribe to our newsletter' })
        : page.getByRole('dialog', { name: 'Subscribe to our newsletter' });
    await frame.waitFor();
    await page.getByLabel('Email address').waitFor();
    assert.deepEqual(await axeViolations(page), [], `${type}: form`);
    await page.screenshot({ path: join(ARTIFACTS, `${type}.png`) });

    if (type === 'popup') {
      // The error state and the success step pass too.
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await page.getByText('This field is required', { exact: true }).waitFor();
      assert.deepEqual(await axeViolations(page), [], `${type}: error`);
      await page.screenshot({ path: join(ARTIFACTS, `${type}-error.png`) });
      await page.getByLabel('Email address').fill('axe@example.com');
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await page.getByRole('heading', { name: 'Thanks for subscribing!' }).waitFor();
      assert.deepEqual(await axeViolations(page), [], `${type}: success`);
      await page.screenshot({ path: join(ARTIFACTS, `${type}-success.png`) });
    }
    assert.deepEqual(errors, [], type);
    await close();
  }
});

test('targeting: pages, scroll depth, exit intent, frequency, and never again after a sign-up', async () => {
  const { api } = await app.newWorkspace();
  const blogOnly = { ...starterDefinition('flyout'), targeting: { pages: { include: ['/blog/*'], exclude: ['/blog/private'] } } };
  await createLiveForm(api, { name: 'Blog', type: 'flyout', definition: blogOnly });
  for (const [path, shown] of [
    ['/', 0],
    ['/blog/private', 0],
    ['/blog/post', 1],
  ] as const) {
    const v = await visit(api, { path });
    if (shown) await v.page.getByRole('dialog').waitFor();
    await settled(v.page);
    assert.equal(await hosts(v.page), shown, path);
    await v.close();
  }

  const scroll = await app.newWorkspace();
  await createLiveForm(scroll.api, {
    name: 'Scroll',
    type: 'flyout',
    definition: { ...starterDefinition('flyout'), targeting: { scroll_percent: 60 } },
  });
  const scrolled = await visit(scroll.api);
  await settled(scrolled.page);
  assert.equal(await hosts(scrolled.page), 0, 'not before the scroll depth');
  await scrolled.page.mouse.wheel(0, 2800);
  await scrolled.page.getByRole('dialog').waitFor();
  await scrolled.close();

  const exit = await app.newWorkspace();
  await createLiveForm(exit.api, {
    name: 'Exit',
    type: 'popup',
    definition: { ...starterDefinition('popup'), targeting: { exit_intent: true } },
  });
  const leaving = await visit(exit.api);
  await settled(leaving.page);
  await leaving.page.mouse.move(500, 300);
  await leaving.page.mouse.move(500, 5);
  assert.equal(await hosts(leaving.page), 0, 'not while the pointer stays in the page');
  // The pointer leaves through the top edge (towards the tabs): the browser's mouseout.
  await leaving.page.evaluate(() =>
    document.documentElement.dispatchEvent(new MouseEvent('mouseout', { bubbles: true, clientX: 500, clientY: -1, relatedTarget: null })),
  );
  await leaving.page.getByRole('dialog').waitFor();
  await leaving.close();

  // Once per visitor: shown, closed, not shown on the next page.
  const once = await app.newWorkspace();
  await createLiveForm(once.api, {
    name: 'Once',
    type: 'popup',
    definition: { ...starterDefinition('popup'), targeting: { frequency: { mode: 'once' } } },
  });
  const context = await browser.newContext();
  const onceSite = await siteFor(once.api);
  const firstVisit = await visit(once.api, { context, site: onceSite });
  await firstVisit.page.getByRole('dialog').waitFor();
  await firstVisit.page.getByRole('button', { name: 'Close' }).click();
  await firstVisit.close();
  const nextVisit = await visit(once.api, { context, site: onceSite, path: '/other' });
  await settled(nextVisit.page);
  assert.equal(await hosts(nextVisit.page), 0, 'once means once');
  await nextVisit.close();
  await context.close();
  await onceSite.close();

  // Every page view, until the visitor signs up.
  const always = await app.newWorkspace();
  await createLiveForm(always.api, { name: 'Always', type: 'popup' });
  const visitor = await browser.newContext();
  const alwaysSite = await siteFor(always.api);
  const repeat = await visit(always.api, { context: visitor, site: alwaysSite });
  await repeat.page.getByRole('dialog').waitFor();
  await repeat.page.keyboard.press('Escape');
  await repeat.close();
  const before = await visit(always.api, { context: visitor, site: alwaysSite });
  await before.page.getByLabel('Email address').fill('done@example.com');
  await before.page.getByRole('button', { name: 'Subscribe' }).click();
  await before.page.getByRole('heading', { name: 'Thanks for subscribing!' }).waitFor();
  await before.close();
  const afterSignUp = await visit(always.api, { context: visitor, site: alwaysSite });
  await settled(afterSignUp.page);
  assert.equal(await hosts(afterSignUp.page), 0, 'not shown again after a sign-up');
  await afterSignUp.close();
  await visitor.close();
  await alwaysSite.close();
});

test('an experiment: the variant drawn by weight is what the visitor sees, and the submission records it', async () => {
  const { api } = await app.newWorkspace();
  const definition: any = structuredClone(starterDefinition('popup'));
  const bSteps = structuredClone(definition.steps);
  bSteps[0].blocks[0].content = 'Get 10% off your first order';
  definition.experiments = [
    {
      id: 'headline',
      variants: [
        { id: 'a', weight: 0 },
        { id: 'b', weight: 5, steps: bSteps, styles: { button_color: '#7c3aed' } },
      ],
    },
  ];
  const form = await createLiveForm(api, { name: 'Experiment', definition });
  const { page, close } = await visit(api);
  await page.getByRole('dialog', { name: 'Get 10% off your first order' }).waitFor();
  assert.equal(
    await page.getByRole('button', { name: 'Subscribe' }).evaluate((b) => getComputedStyle(b).backgroundColor),
    'rgb(124, 58, 237)',
  );
  await page.getByLabel('Email address').fill('variant@example.com');
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await page.getByRole('heading', { name: 'Thanks for subscribing!' }).waitFor();
  const [submission] = (await api.get(`/v2/forms/${form.id}/submissions`)).body.data;
  assert.deepEqual([submission.experiment_id, submission.variant_id], ['headline', 'b']);
  await close();
});

test('an embed form fills its placeholder; a bot posting from the page without the challenge is refused; failures stay silent', async () => {
  const { api } = await app.newWorkspace();
  const inline = await createLiveForm(api, { name: 'Inline', type: 'embed' });
  const gone = await createLiveForm(api, { name: 'Gone', type: 'popup' });
  const content = `<section aria-label="Newsletter"><div id="slot" data-postlane-form="${inline.token}"></div></section><div data-postlane-form="unknownToken"></div>`;
  const key = (await api.get('/v2/forms/embed')).body.public_key;
  // The script names the popup, which is unpublished before the page asks for it: its load is a 404.
  const script = await (await fetch(`${app.url}/js/${key}/postlane.js`)).text();
  assert.ok(script.includes(gone.token));
  await api.post(`/v2/forms/${gone.id}/unpublish`);
  const { page, errors, close } = await visit(api, { content });
  const region = page.locator('#slot').getByRole('region', { name: 'Subscribe to our newsletter' });
  await region.waitFor();
  await settled(page);
  assert.equal(await hosts(page), 1, 'only the embed form');

  const refused = await page.evaluate(
    async ({ url }) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ fields: { email: 'bot@example.com' } }),
      });
      return [response.status, (await response.json()).error];
    },
    { url: `${app.url}/v2/forms/${inline.token}/submit` },
  );
  assert.deepEqual(refused, [403, 'Proof of work required']);

  await region.getByLabel('Email address').fill('inline@example.com');
  await region.getByRole('button', { name: 'Subscribe' }).click();
  await page.getByRole('heading', { name: 'Thanks for subscribing!' }).waitFor();
  const listed = (await api.get(`/v2/forms/${inline.id}/submissions`)).body.data;
  assert.deepEqual(
    listed.map((s: any) => s.fields.email),
    ['inline@example.com'],
  );
  assert.deepEqual(errors, []);
  await close();
});
