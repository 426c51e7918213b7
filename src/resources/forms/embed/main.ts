// The embed script of a workspace (https://emailit.com/docs/forms/install.md): placed once on any
// page, `async`, it shows the workspace's live popup, flyout, full-page and banner forms as their
// targeting says, and fills every element marked `data-postlane-form="<token>"` with that embed
// form. It never breaks the page: every failure is swallowed and the form simply does not appear.
import type { Styles } from '../definition.ts';
import { PublicApi, solve, type LoadedForm } from './api.ts';
import { StepsView } from './form.ts';
import { Shell } from './shell.ts';
import { chooseVariant, dueForVisitor, onTargetedPage, rememberShown, rememberSubmitted, whenTriggered } from './targeting.ts';

declare const __POSTLANE__: { forms: Array<{ token: string; type: string }> };

const MODAL = ['popup', 'full_page'];
let modalOpen = false;

function show(api: PublicApi, loaded: LoadedForm, mount?: HTMLElement): void {
  const { token, type, definition } = loaded;
  const modal = MODAL.includes(type);
  if (modal && modalOpen) return; // one modal at a time
  const chosen = chooseVariant(token, definition);
  const variant = chosen ? definition.experiments?.[0]?.variants.find((v) => v.id === chosen.variantId) : undefined;
  const styles: Styles = { ...definition.styles, ...variant?.styles };
  const shell = new Shell(type, styles, () => {
    if (modal) modalOpen = false;
  });
  let proof = solve(loaded.challenge).catch(() => null);
  const view: StepsView = new StepsView(shell.body, shell.live, variant?.steps ?? definition.steps, {
    close: () => shell.close(),
    async submit(values, honeypot) {
      for (let attempt = 0; ; attempt++) {
        const answer = await api.submit(token, {
          fields: values,
          page_url: location.href,
          experiment_id: chosen?.experimentId,
          variant_id: chosen?.variantId,
          honeypot: honeypot || undefined,
          proof: (await proof) ?? undefined,
        });
        if (answer.status === 201) {
          rememberSubmitted(token);
          view.showSuccess(answer.body.success_step);
          return null;
        }
        if (answer.status === 400 && answer.body.errors) return answer.body.errors;
        // A challenge that expired meanwhile (or was used): one more try with a fresh one.
        if (answer.status !== 403 || attempt > 0) throw new Error(`submit ${answer.status}`);
        proof = api.load(token).then((fresh) => solve(fresh.challenge));
      }
    },
  });
  shell.labelledBy(view.headingId);
  if (modal) modalOpen = true;
  if (type !== 'embed') rememberShown(token);
  shell.open(mount);
}

/** Runs `task`, swallowing its failure: the form does not appear, the page goes on. */
function safely(task: () => void): void {
  try {
    task();
  } catch {
    // never break the page
  }
}

function run(api: PublicApi, forms: Array<{ token: string; type: string }>): void {
  const quietly = (promise: Promise<unknown>): void => {
    promise.catch(() => undefined);
  };
  for (const form of forms) {
    if (form.type === 'embed') continue;
    quietly(
      api.load(form.token).then((loaded) => {
        const targeting = loaded.definition.targeting ?? {};
        if (!onTargetedPage(targeting, location) || !dueForVisitor(form.token, targeting)) return;
        whenTriggered(targeting, () => safely(() => show(api, loaded)));
      }),
    );
  }
  const embeds = new Set(forms.filter((form) => form.type === 'embed').map((form) => form.token));
  for (const element of document.querySelectorAll<HTMLElement>('[data-postlane-form]')) {
    const token = element.dataset.postlaneForm ?? '';
    if (embeds.has(token)) quietly(api.load(token).then((loaded) => show(api, loaded, element)));
  }
}

try {
  const flag = window as unknown as { __postlaneForms?: boolean };
  // `currentScript` is only set while this code first runs: read it before anything waits.
  const src = (document.currentScript as HTMLScriptElement | null)?.src ?? '';
  // Solving the proof of work needs the browser's SHA-256 (secure pages only); without it no
  // submission could be accepted, so no form is shown.
  if (!flag.__postlaneForms && src.includes('/js/') && globalThis.crypto?.subtle) {
    flag.__postlaneForms = true;
    const api = new PublicApi(src.slice(0, src.lastIndexOf('/js/')));
    const start = () => safely(() => run(api, __POSTLANE__.forms));
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
    else start();
  }
} catch {
  // never break the page
}
