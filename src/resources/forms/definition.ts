// The vocabulary of a form's `definition` (https://emailit.com/docs/forms.md): steps of kind `form`
// or `success` made of blocks (`text`, `button`, `image` and the input types), buttons with an
// action, inputs with `name`, `label`, `required`; plus `styles`, `targeting` and `experiments`,
// whose fields are ours (the spec leaves them to the form builder) and are what the embed script
// understands. A definition is stored as given and checked here when the form is published. Pure
// code without Node imports: the embed script imports its types.

export const FORM_TYPES = ['popup', 'full_page', 'flyout', 'embed', 'banner'] as const;
export const INPUT_TYPES = ['email', 'text_input', 'phone', 'date', 'radio', 'checkbox', 'dropdown'] as const;
export const BLOCK_TYPES = ['text', 'button', 'image', ...INPUT_TYPES] as const;
export const BUTTON_ACTIONS = ['submit', 'next', 'close', 'go_to_url'] as const;
export const STEP_KINDS = ['form', 'success'] as const;
export const FREQUENCY_MODES = ['always', 'once_per_session', 'once', 'every_n_days'] as const;
export const POSITIONS = ['top', 'bottom', 'bottom_right', 'bottom_left', 'top_right', 'top_left'] as const;

export type FormType = (typeof FORM_TYPES)[number];
export type InputType = (typeof INPUT_TYPES)[number];
export type ButtonAction = (typeof BUTTON_ACTIONS)[number];

export interface Option {
  label: string;
  value: string;
}

export interface TextBlock {
  id: string;
  type: 'text';
  content: string;
  level?: 'heading' | 'paragraph';
}
export interface ButtonBlock {
  id: string;
  type: 'button';
  label: string;
  action: ButtonAction;
  url?: string;
  new_tab?: boolean;
}
export interface ImageBlock {
  id: string;
  type: 'image';
  src: string;
  alt: string;
  href?: string;
}
export interface InputBlock {
  id: string;
  type: InputType;
  name: string;
  label: string;
  required?: boolean;
  placeholder?: string;
  /** radio and dropdown (required), checkbox (optional: several boxes instead of one). */
  options?: Array<string | Option>;
}
export type Block = TextBlock | ButtonBlock | ImageBlock | InputBlock;

export interface Step {
  id: string;
  name?: string;
  kind: 'form' | 'success';
  blocks: Block[];
}

export interface Styles {
  background_color?: string;
  text_color?: string;
  button_color?: string;
  button_text_color?: string;
  overlay_color?: string;
  font_family?: string;
  font_size?: number;
  border_radius?: number;
  width?: number;
  position?: (typeof POSITIONS)[number];
}

export interface Targeting {
  delay_seconds?: number;
  scroll_percent?: number;
  exit_intent?: boolean;
  pages?: { include?: string[]; exclude?: string[] };
  frequency?: { mode: (typeof FREQUENCY_MODES)[number]; days?: number };
}

export interface Variant {
  id: string;
  weight: number;
  /** Replace the definition's steps or styles for visitors shown this variant. */
  steps?: Step[];
  styles?: Styles;
}
export interface Experiment {
  id: string;
  variants: Variant[];
}

export interface Definition {
  version: 1;
  type: FormType;
  steps: Step[];
  styles?: Styles;
  targeting?: Targeting;
  experiments?: Experiment[];
}

export const isInput = (block: Block): block is InputBlock => (INPUT_TYPES as readonly string[]).includes(block.type);

/** An option as `{label, value}` (a bare string is both). */
export const optionOf = (option: string | Option): Option => (typeof option === 'string' ? { label: option, value: option } : option);

/** Every input of some steps, in order. */
export function inputsOf(steps: Step[]): InputBlock[] {
  return steps.filter((step) => step.kind === 'form').flatMap((step) => step.blocks.filter(isInput));
}

/** The definition generated when `definition` is omitted on create. */
export function starterDefinition(type: FormType): Definition {
  return {
    version: 1,
    type,
    steps: [
      {
        id: 'form',
        name: 'Sign up',
        kind: 'form',
        blocks: [
          { id: 'heading', type: 'text', level: 'heading', content: 'Subscribe to our newsletter' },
          { id: 'email', type: 'email', name: 'email', label: 'Email address', required: true, placeholder: 'you@example.com' },
          { id: 'subscribe', type: 'button', label: 'Subscribe', action: 'submit' },
        ],
      },
      {
        id: 'success',
        name: 'Thank you',
        kind: 'success',
        blocks: [{ id: 'thanks', type: 'text', level: 'heading', content: 'Thanks for subscribing!' }],
      },
    ],
    styles: {},
    targeting: {},
    experiments: [],
  };
}

export const MISSING_STEPS = 'The form cannot be published: its definition needs at least one form step and one success step';

// Checking ---------------------------------------------------------------------------------

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown, max = 5000) => typeof value === 'string' && value.trim() !== '' && value.length <= max;
const oneOf = (list: readonly string[]) => list.join(', ');
const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
// Values the embed script sets as CSS property values: plain colors and font lists only.
const COLOR = /^(#[0-9a-fA-F]{3,8}|(rgb|rgba|hsl|hsla)\([0-9.,%\s/deg]{1,60}\)|[a-zA-Z]{3,30})$/;
const FONT = /^[A-Za-z0-9 ,'"_-]{1,200}$/;

function isWebUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 2048) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function inRange(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
}

class Checker {
  readonly problems: string[] = [];
  fail(path: string, message: string): void {
    this.problems.push(`${path} ${message}`);
  }

  steps(steps: unknown, path: string): void {
    const missing = () =>
      path === 'steps' ? this.problems.unshift(MISSING_STEPS) : this.fail(path, 'need at least one form step and one success step');
    if (!Array.isArray(steps)) return void missing();
    const stepIds = new Set<string>();
    const blockIds = new Set<string>();
    const names = new Set<string>();
    let submitButtons = 0;
    steps.forEach((step, i) => {
      const at = `${path}[${i}]`;
      if (!isObject(step)) return this.fail(at, 'must be an object');
      if (!isText(step.id, 100)) this.fail(`${at}.id`, 'must be a non-empty string');
      else if (stepIds.has(step.id as string)) this.fail(`${at}.id`, `repeats the step id "${step.id}"`);
      else stepIds.add(step.id as string);
      if (step.name !== undefined && typeof step.name !== 'string') this.fail(`${at}.name`, 'must be a string');
      if (!(STEP_KINDS as readonly unknown[]).includes(step.kind)) this.fail(`${at}.kind`, `must be one of ${oneOf(STEP_KINDS)}`);
      if (!Array.isArray(step.blocks) || step.blocks.length === 0) return this.fail(`${at}.blocks`, 'must be a non-empty array of blocks');
      step.blocks.forEach((block, j) => {
        const blockAt = `${at}.blocks[${j}]`;
        if (!isObject(block)) return this.fail(blockAt, 'must be an object');
        if (!isText(block.id, 100)) this.fail(`${blockAt}.id`, 'must be a non-empty string');
        else if (blockIds.has(block.id as string)) this.fail(`${blockAt}.id`, `repeats the block id "${block.id}"`);
        else blockIds.add(block.id as string);
        if (this.block(block, blockAt, step.kind === 'success', names)) submitButtons += 1;
      });
    });
    const kinds = steps.filter(isObject).map((step) => step.kind);
    if (!kinds.includes('form') || !kinds.includes('success')) missing();
    else if (submitButtons === 0) this.fail(path, 'need a button with the submit action in a form step');
  }

  /** Checks one block; true when it is a submit button of a form step. */
  block(block: Json, at: string, inSuccessStep: boolean, names: Set<string>): boolean {
    const type = block.type;
    if (!(BLOCK_TYPES as readonly unknown[]).includes(type)) {
      this.fail(`${at}.type`, `must be one of ${oneOf(BLOCK_TYPES)}`);
      return false;
    }
    if (type === 'text') {
      if (!isText(block.content)) this.fail(`${at}.content`, 'must be a non-empty string of at most 5000 characters');
      if (block.level !== undefined && block.level !== 'heading' && block.level !== 'paragraph')
        this.fail(`${at}.level`, 'must be heading or paragraph');
      return false;
    }
    if (type === 'image') {
      if (!isWebUrl(block.src)) this.fail(`${at}.src`, 'must be an http or https URL');
      if (typeof block.alt !== 'string') this.fail(`${at}.alt`, 'must be a string (empty for a decorative image)');
      if (block.href !== undefined && !isWebUrl(block.href)) this.fail(`${at}.href`, 'must be an http or https URL');
      else if (block.href !== undefined && !isText(block.alt, 500))
        this.fail(`${at}.alt`, 'must describe the link of an image with an href');
      return false;
    }
    if (type === 'button') {
      if (!isText(block.label, 200)) this.fail(`${at}.label`, 'must be a non-empty string');
      if (!(BUTTON_ACTIONS as readonly unknown[]).includes(block.action)) {
        this.fail(`${at}.action`, `must be one of ${oneOf(BUTTON_ACTIONS)}`);
        return false;
      }
      if (block.action === 'go_to_url' && !isWebUrl(block.url))
        this.fail(`${at}.url`, 'must be an http or https URL for the go_to_url action');
      if (block.new_tab !== undefined && typeof block.new_tab !== 'boolean') this.fail(`${at}.new_tab`, 'must be a boolean');
      if (inSuccessStep && (block.action === 'submit' || block.action === 'next'))
        this.fail(`${at}.action`, 'must be close or go_to_url in a success step');
      return !inSuccessStep && block.action === 'submit';
    }
    // An input.
    if (inSuccessStep) this.fail(at, 'is an input, and a success step has no inputs');
    if (typeof block.name !== 'string' || !NAME.test(block.name)) {
      this.fail(`${at}.name`, 'must start with a letter and hold at most 64 letters, digits, _, . or -');
    } else if (names.has(block.name)) {
      this.fail(`${at}.name`, `repeats the input name "${block.name}"`);
    } else {
      names.add(block.name);
    }
    if (!isText(block.label, 500)) this.fail(`${at}.label`, 'must be a non-empty string (every input has a visible label)');
    if (block.required !== undefined && typeof block.required !== 'boolean') this.fail(`${at}.required`, 'must be a boolean');
    if (block.placeholder !== undefined && typeof block.placeholder !== 'string') this.fail(`${at}.placeholder`, 'must be a string');
    const needsOptions = type === 'radio' || type === 'dropdown';
    if (needsOptions || block.options !== undefined) this.options(block.options, `${at}.options`);
    return false;
  }

  options(options: unknown, at: string): void {
    if (!Array.isArray(options) || options.length === 0 || options.length > 100)
      return this.fail(at, 'must be an array of 1 to 100 options');
    const values = new Set<string>();
    options.forEach((option, i) => {
      const valid = isText(option, 500) || (isObject(option) && isText(option.label, 500) && isText(option.value, 500));
      if (!valid) return this.fail(`${at}[${i}]`, 'must be a non-empty string or {label, value}');
      const value = optionOf(option as string | Option).value;
      if (values.has(value)) this.fail(`${at}[${i}]`, `repeats the value "${value}"`);
      values.add(value);
    });
  }

  styles(styles: unknown, at: string): void {
    if (styles === undefined) return;
    if (!isObject(styles)) return this.fail(at, 'must be an object');
    for (const key of ['background_color', 'text_color', 'button_color', 'button_text_color', 'overlay_color']) {
      if (styles[key] !== undefined && !(typeof styles[key] === 'string' && COLOR.test(styles[key])))
        this.fail(`${at}.${key}`, 'must be a CSS color such as #1d4ed8 or rgb(29 78 216)');
    }
    if (styles.font_family !== undefined && !(typeof styles.font_family === 'string' && FONT.test(styles.font_family)))
      this.fail(`${at}.font_family`, 'must be a list of font names');
    const numbers: Array<[string, number, number]> = [
      ['font_size', 10, 32],
      ['border_radius', 0, 64],
      ['width', 200, 1200],
    ];
    for (const [key, min, max] of numbers)
      if (styles[key] !== undefined && !inRange(styles[key], min, max)) this.fail(`${at}.${key}`, `must be a number from ${min} to ${max}`);
    if (styles.position !== undefined && !(POSITIONS as readonly unknown[]).includes(styles.position))
      this.fail(`${at}.position`, `must be one of ${oneOf(POSITIONS)}`);
  }

  targeting(targeting: unknown, at: string): void {
    if (targeting === undefined) return;
    if (!isObject(targeting)) return this.fail(at, 'must be an object');
    if (targeting.delay_seconds !== undefined && !inRange(targeting.delay_seconds, 0, 3600))
      this.fail(`${at}.delay_seconds`, 'must be a number from 0 to 3600');
    if (targeting.scroll_percent !== undefined && !inRange(targeting.scroll_percent, 0, 100))
      this.fail(`${at}.scroll_percent`, 'must be a number from 0 to 100');
    if (targeting.exit_intent !== undefined && typeof targeting.exit_intent !== 'boolean')
      this.fail(`${at}.exit_intent`, 'must be a boolean');
    const pages = targeting.pages;
    if (pages !== undefined) {
      if (!isObject(pages)) this.fail(`${at}.pages`, 'must be an object with include and exclude lists');
      else {
        for (const key of ['include', 'exclude']) {
          const list = pages[key];
          if (list !== undefined && !(Array.isArray(list) && list.length <= 100 && list.every((p) => isText(p, 500))))
            this.fail(`${at}.pages.${key}`, 'must be an array of URL path patterns (* matches anything)');
        }
      }
    }
    const frequency = targeting.frequency;
    if (frequency !== undefined) {
      if (!isObject(frequency) || !(FREQUENCY_MODES as readonly unknown[]).includes(frequency.mode))
        this.fail(`${at}.frequency.mode`, `must be one of ${oneOf(FREQUENCY_MODES)}`);
      else if (frequency.mode === 'every_n_days' && !(Number.isInteger(frequency.days) && inRange(frequency.days, 1, 365)))
        this.fail(`${at}.frequency.days`, 'must be a whole number of days from 1 to 365');
    }
  }

  experiments(experiments: unknown, at: string): void {
    if (experiments === undefined) return;
    if (!Array.isArray(experiments)) return this.fail(at, 'must be an array');
    if (experiments.length > 1) return this.fail(at, 'may hold one experiment at a time');
    experiments.forEach((experiment, i) => {
      const expAt = `${at}[${i}]`;
      if (!isObject(experiment)) return this.fail(expAt, 'must be an object');
      if (!isText(experiment.id, 100)) this.fail(`${expAt}.id`, 'must be a non-empty string');
      const variants = experiment.variants;
      if (!Array.isArray(variants) || variants.length === 0 || variants.length > 10)
        return this.fail(`${expAt}.variants`, 'must be an array of 1 to 10 variants');
      const ids = new Set<string>();
      let total = 0;
      variants.forEach((variant, j) => {
        const varAt = `${expAt}.variants[${j}]`;
        if (!isObject(variant)) return this.fail(varAt, 'must be an object');
        if (!isText(variant.id, 100)) this.fail(`${varAt}.id`, 'must be a non-empty string');
        else if (ids.has(variant.id as string)) this.fail(`${varAt}.id`, `repeats the variant id "${variant.id}"`);
        else ids.add(variant.id as string);
        if (!inRange(variant.weight, 0, 1_000_000)) this.fail(`${varAt}.weight`, 'must be a number from 0 to 1000000');
        else total += variant.weight as number;
        if (variant.steps !== undefined) this.steps(variant.steps, `${varAt}.steps`);
        this.styles(variant.styles, `${varAt}.styles`);
      });
      if (total <= 0) this.fail(`${expAt}.variants`, 'need a positive weight in all');
    });
  }
}

/** Every reason `definition` cannot be published (empty when it can), each with its path. */
export function definitionProblems(definition: unknown): string[] {
  if (!isObject(definition)) return [MISSING_STEPS];
  const checker = new Checker();
  if (definition.version !== 1) checker.fail('version', 'must be 1');
  if (!(FORM_TYPES as readonly unknown[]).includes(definition.type)) checker.fail('type', `must be one of ${oneOf(FORM_TYPES)}`);
  checker.steps(definition.steps, 'steps');
  checker.styles(definition.styles, 'styles');
  checker.targeting(definition.targeting, 'targeting');
  checker.experiments(definition.experiments, 'experiments');
  return checker.problems;
}

/** The steps a visitor shown `variantId` of the definition's experiment answers. */
export function stepsFor(definition: Definition, variantId: string | null): Step[] {
  const variant = variantId === null ? undefined : definition.experiments?.[0]?.variants.find((v) => v.id === variantId);
  return variant?.steps ?? definition.steps;
}
