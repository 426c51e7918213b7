// end: the branch ends here (other branches of the run go on).
import { Type } from '@sinclair/typebox';
import type { ActionDefinition, Finish } from './action.ts';

const ended = (): Finish => ({ status: 'completed', outcome: 'completed', data: { result: 'ended' }, branches: [] });

export const end: ActionDefinition = {
  title: 'End',
  description: 'Ends this branch of the run; it has no outgoing connections.',
  config: Type.Object({}),
  branching: 'none',
  instant: { applies: () => true, readsScope: false, decide: ended },
  async run({ finish }) {
    return finish(ended());
  },
};
