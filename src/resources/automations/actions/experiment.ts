// experiment: picks one variant at random by weight; the run goes on by that variant's edges and
// the default edges. It only decides, so it is done in the transaction that reaches it.
import { Type } from '@sinclair/typebox';
import { isObject, nonEmpty, type ActionDefinition, type Finish } from './action.ts';

function pickVariant(variants: Array<{ key: string; weight: number }>): string {
  const total = variants.reduce((sum, v) => sum + Math.max(0, v.weight), 0);
  if (total <= 0) return variants[Math.floor(Math.random() * variants.length)].key;
  let r = Math.random() * total;
  for (const v of variants) {
    r -= Math.max(0, v.weight);
    if (r < 0) return v.key;
  }
  return variants[variants.length - 1].key;
}

function decide(step: { config: Record<string, any> }): Finish {
  const variant = pickVariant(step.config.variants);
  return { status: 'completed', outcome: variant, data: { variant }, branches: [variant, 'default'] };
}

export const experiment: ActionDefinition = {
  title: 'Experiment',
  description: 'Picks one variant at random by weight and goes on by its edges, then by the default edges.',
  config: Type.Object({
    variants: Type.Array(
      Type.Object({
        key: Type.String({ minLength: 1, description: 'Unique, not default; the branch of its connections' }),
        weight: Type.Number({ minimum: 0, description: 'Relative weight' }),
      }),
      { minItems: 1, description: 'The variants' },
    ),
    control: Type.Optional(Type.String({ description: 'The key of the control variant' })),
  }),
  branching: 'variants',

  check(c, { add }) {
    if (!Array.isArray(c.variants) || c.variants.length === 0) {
      add('variants', 'The variants are required (each a key and a weight).');
      return;
    }
    const keys = new Set<string>();
    c.variants.forEach((v: any, j: number) => {
      if (!isObject(v) || !nonEmpty(v.key) || v.key === 'default' || keys.has(v.key))
        add(`variants.${j}.key`, 'Each variant needs a unique key (not default).');
      else keys.add(v.key);
      if (!isObject(v) || typeof v.weight !== 'number' || !(v.weight >= 0))
        add(`variants.${j}.weight`, 'The weight must be a number of at least 0.');
    });
    if (c.control !== undefined && c.control !== null && !keys.has(c.control))
      add('control', 'The control must be one of the variant keys.');
  },

  instant: { applies: () => true, readsScope: false, decide },

  async run({ step, finish }) {
    return finish(decide(step));
  },
};
