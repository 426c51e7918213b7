// wait: holds the run for `seconds`. The visit waits with its job due later; a wait of 0 is done
// in the transaction that reaches it.
import { Type } from '@sinclair/typebox';
import { nowMs } from '../../../platform/clock.ts';
import type { ActionDefinition, Finish } from './action.ts';

export const MAX_WAIT_SECONDS = 2_592_000;

const doneAtOnce = (): Finish => ({ status: 'completed', outcome: 'completed', data: { status: 'completed', delayMs: 0, seconds: 0 } });

export const wait: ActionDefinition = {
  title: 'Wait',
  description: `Holds the run for a number of seconds (at most ${MAX_WAIT_SECONDS}, 30 days) before the next step.`,
  config: Type.Object({
    seconds: Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS, description: 'How long to wait' }),
  }),
  branching: 'default',

  check(c, { add }) {
    if (!Number.isInteger(c.seconds) || c.seconds < 0 || c.seconds > MAX_WAIT_SECONDS)
      add('seconds', `The seconds is required: a whole number from 0 to ${MAX_WAIT_SECONDS}.`);
  },

  instant: {
    applies: (config) => Number(config?.seconds ?? 0) <= 0,
    readsScope: false,
    decide: doneAtOnce,
  },

  async run({ step, visit, finish, holdUntil }) {
    const seconds = Number(step.config.seconds ?? 0);
    const delayMs = seconds * 1000;
    if (visit.status === 'waiting') {
      const data = JSON.parse(visit.data) as { resume_at_ms?: number };
      // A repeated first job (killed before it was deleted) finds the wait not yet due.
      if (data.resume_at_ms && nowMs() < data.resume_at_ms - 5) return;
      return finish({ status: 'completed', outcome: 'completed', data: { status: 'completed', delayMs, seconds } });
    }
    if (delayMs <= 0) return finish(doneAtOnce());
    const resumeAt = Math.floor(nowMs() + delayMs);
    return holdUntil(resumeAt, { status: 'waiting', delayMs, seconds, resume_at_ms: resumeAt });
  },
};
