// The mjml package (the reference compiler), loaded once. mjml-core and mjml-validator are
// mjml's own pinned dependencies: they hold the component registry (allowed attributes and
// their types, defaults, ending tags) and the parent/child rules this service checks against.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export interface MjmlComponentClass {
  endingTag?: boolean;
  allowedAttributes?: Record<string, string>;
  defaultAttributes?: Record<string, unknown>;
}

interface TypeChecker {
  isValid(): boolean;
  getErrorMessage(): string;
}

interface CompileResult {
  html: string;
  errors: unknown[];
}

type Compile = (input: string | object, options: Record<string, unknown>) => Promise<CompileResult>;

const mjml2html = require('mjml') as Compile;
const core = require('mjml-core') as {
  components: Record<string, MjmlComponentClass>;
  initializeType(type: string): new (value: string) => TypeChecker;
};
const validator = require('mjml-validator') as { dependencies: Record<string, Array<string | RegExp>> };

export { MJML_VERSION } from './versions.ts';

export const components: Readonly<Record<string, MjmlComponentClass>> = core.components;
export const dependencies: Readonly<Record<string, Array<string | RegExp>>> = validator.dependencies;

/** Tags whose content is raw HTML (mj-text, mj-button, mj-raw…). */
export const endingTags: ReadonlySet<string> = new Set(
  Object.entries(components)
    .filter(([, component]) => component.endingTag)
    .map(([tag]) => tag),
);

/** Attributes of the root `<mjml>` element (not a registered component). */
export const ROOT_ATTRIBUTES: Record<string, string> = { lang: 'string', dir: 'enum(ltr,rtl,auto)', owa: 'enum(desktop,mobile)' };

/** Tags without a component that mjml accepts in their own places. */
export const COMPONENTLESS_TAGS = ['mj-all', 'mj-class', 'mj-selector', 'mj-html-attribute'] as const;

/** Attributes every component accepts. */
export const GLOBAL_ATTRIBUTES = ['mj-class', 'css-class'];

const checkers = new Map<string, new (value: string) => TypeChecker>();

/** null when `value` fits the mjml attribute type, else mjml's explanation. */
export function attributeTypeError(type: string, value: string): string | null {
  let Checker = checkers.get(type);
  if (!Checker) {
    Checker = core.initializeType(type);
    checkers.set(type, Checker);
  }
  const result = new Checker(value);
  return result.isValid() ? null : result.getErrorMessage().trim();
}

/** Compiles a checked document to HTML. Variable tags are left in place. */
export async function compileMjml(input: string | object): Promise<string> {
  const result = await mjml2html(input, {
    validationLevel: 'skip', // checked beforehand, with positions and stable codes
    ignoreIncludes: true, // never read files named by a document
    keepComments: true,
    minify: false,
    beautify: false,
  });
  return result.html;
}
