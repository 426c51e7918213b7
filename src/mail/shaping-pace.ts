// The pace of one destination (docs/delivery.md), kept apart from timers so that every decision is
// a pure function of the answers and the instants passed in (tests drive it with a fake clock).
//
// The receiver's limit is learned, then the pace is held just under it:
// - Starts are spaced evenly, and no second ever holds more starts than the pace allows. A
//   start that came late (a busy event loop) is made up for, up to CREDIT_MS, within that
//   one-second cap: lateness does not cost rate, and a catch-up is never a burst.
// - The first throttle teaches the rate the receiver took over the last second (the "ceiling");
//   the pace is held a little below it (HOLD). Acceptances that reach us within a second after
//   the lesson still count: on a busy machine a 421 on one connection is often read before the
//   250s of messages the receiver took just before it, and a lesson from those alone would
//   crawl at a fraction of the receiver's rate.
// - A later throttle is jitter when the receiver still took nearly all we sent over the last
//   two seconds (a few starts bunched up by scheduling): the pace stands, only a beat is
//   skipped. When it refused a real share, its limit is lower: the ceiling follows what it
//   took, a tenth lower at most per lesson.
// - A measured ceiling may be low (on a busy machine the answers come late and spread out): the
//   pace probes higher at every clean step (LEARN_FACTOR) until a probe is throttled. That
//   returns it to the pace before the probe, which then holds for CAPPED_STEPS clean steps
//   before probing again in small steps (PROBE_FACTOR).
// - A block about the sender (reputation, policy) halves the pace and pauses the destination;
//   clean steps raise it back toward the held pace.
/** What an answer means for the destination's pace. */
export type Feedback = 'accepted' | 'throttled' | 'blocked' | 'other';

/** The pace held below the receiver's learned rate. */
export const HOLD = 0.97;
/** Window over which starts never exceed the pace (receivers count per second). */
const WINDOW_MS = 1_000;
/** Lateness of a start made up for later (within the window cap). */
const CREDIT_MS = 150;
/** Answers over which a throttle is judged (jitter or a real limit). */
const JUDGE_MS = 2_000;
/** A throttle is jitter when at least this share of the answers judged were acceptances. */
const JITTER_SHARE = 0.9;
/** A probe is too far when more than this share of the answers judged were throttles. */
const PROBE_REFUSED_SHARE = 0.02;
/** A lesson lowers the ceiling by this factor at most (answers come late on a busy machine). */
const LESSON_FLOOR = 0.9;
const RECOVERY_FACTOR = 1.1;
const LEARN_FACTOR = 1.06;
const PROBE_FACTOR = 1.03;
/** Clean recovery steps at the held pace before probing higher. */
const CAPPED_STEPS = 5;
/** Clean steps after which a destination without a configured limit drops its pace (no limit). */
const FORGET_STEPS = 300;
export const MIN_PER_MINUTE = 6;

export class Pace {
  /** Messages per minute in force; null: none (nothing learned, no configured limit). */
  rate: number | null;
  /** The receiver's learned rate (per minute); 0: not learned. */
  ceiling = 0;
  nextAt = 0;
  pausedUntil = 0;
  lastThrottleAt = 0;
  private lastJudgedAt = Number.NEGATIVE_INFINITY;
  /** When a throttle last changed the pace (jitter does not): probing waits from there. */
  private lastLessonAt = 0;
  private lastStepAt = 0;
  /** When the pace last probed higher (0: not probing), and the pace before the probe. */
  private probeAt = 0;
  private lastGood = 0;
  /** A probe was throttled: the ceiling is known, not just measured. */
  private settled = false;
  private readonly starts: number[] = [];
  private readonly answers: Array<{ at: number; accepted: boolean }> = [];

  /** The configured limit (per minute); null: none. */
  readonly limit: number | null;
  private readonly stepMs: number;

  constructor(limit: number | null, stepMs: number) {
    this.limit = limit;
    this.stepMs = stepMs;
    this.rate = limit;
  }

  /** The pace held below the ceiling (or the configured limit, whichever is lower). */
  hold(): number | null {
    if (this.ceiling === 0) return this.limit;
    return Math.max(MIN_PER_MINUTE, Math.min(this.ceiling * HOLD, this.limit ?? Number.POSITIVE_INFINITY));
  }

  /** When the next message may start (`now` or later). */
  startAt(now: number): number {
    let at = Math.max(this.nextAt, this.pausedUntil);
    if (this.rate !== null) {
      while (this.starts.length && this.starts[0] <= now - WINDOW_MS) this.starts.shift();
      const perWindow = Math.max(1, Math.floor((this.rate * WINDOW_MS) / 60_000));
      if (this.starts.length >= perWindow) at = Math.max(at, this.starts[this.starts.length - perWindow] + WINDOW_MS);
    }
    return at;
  }

  /** A message started at `now`. */
  started(now: number): void {
    if (this.rate === null) {
      this.nextAt = now;
      return;
    }
    this.starts.push(now);
    const spacing = 60_000 / this.rate;
    this.nextAt = Math.max(now - CREDIT_MS, this.nextAt) + spacing;
  }

  /** The destination's answer to a message, at `now`. */
  observe(feedback: Feedback, now: number): void {
    if (feedback === 'accepted' || feedback === 'throttled') {
      this.answers.push({ at: now, accepted: feedback === 'accepted' });
      while (this.answers.length && this.answers[0].at <= now - JUDGE_MS) this.answers.shift();
    }
    if (feedback === 'accepted') this.recover(now);
    else if (feedback === 'throttled') this.throttled(now);
    else if (feedback === 'blocked') this.blocked(now);
  }

  /** Messages per minute the receiver took lately: its busiest recent second. */
  private took(now: number): number {
    let lastSecond = 0;
    let all = 0;
    for (const answer of this.answers) {
      if (!answer.accepted) continue;
      all++;
      if (answer.at > now - WINDOW_MS) lastSecond++;
    }
    return Math.max(lastSecond * (60_000 / WINDOW_MS), all * (60_000 / JUDGE_MS));
  }

  private throttled(now: number): void {
    // One judgement per second: the throttles of one burst are one lesson (a steady stream of
    // them is judged again every second).
    const sameEpisode = now - this.lastJudgedAt < WINDOW_MS;
    if (!sameEpisode) this.lastJudgedAt = now;
    this.lastThrottleAt = now;
    this.lastStepAt = now;
    if (this.rate === null || this.ceiling === 0) {
      // The first lesson: what it took before saying stop.
      const took = this.took(now);
      this.ceiling = Math.max(MIN_PER_MINUTE, took > 0 ? took : 60);
      this.rate = this.hold();
      this.probeAt = 0;
      this.settled = false;
      this.lastLessonAt = now;
    } else if (!sameEpisode) {
      const accepted = this.answers.filter((a) => a.accepted).length;
      const refusedShare = 1 - accepted / this.answers.length;
      if (this.probeAt && refusedShare > PROBE_REFUSED_SHARE) {
        // A probe went too far: back to the pace before it (which is the ceiling's hold).
        this.rate = this.lastGood;
        this.ceiling = this.lastGood / HOLD;
        this.probeAt = 0;
        this.settled = true;
        this.lastLessonAt = now;
      } else if (accepted < JITTER_SHARE * this.answers.length) {
        // It refused a real share: its limit is below our pace, follow what it took (a tenth
        // lower at most per lesson: what it took is measured late on a busy machine).
        this.ceiling = Math.max(MIN_PER_MINUTE, Math.min(this.ceiling, Math.max(this.took(now), this.ceiling * LESSON_FLOOR)));
        this.rate = Math.min(this.rate, this.hold()!);
        this.settled = false;
        this.lastLessonAt = now;
      }
      // Otherwise jitter: the pace stands.
    }
    // Skip a beat, whatever the lesson.
    const skip = this.rate ? 60_000 / this.rate : 0;
    this.pausedUntil = Math.max(this.pausedUntil, now + skip);
    this.nextAt = Math.max(this.nextAt, this.pausedUntil);
  }

  private blocked(now: number): void {
    const current = this.rate ?? Math.max(60, this.took(now));
    this.rate = Math.max(MIN_PER_MINUTE, current / 2);
    this.probeAt = 0;
    this.lastThrottleAt = now;
    this.lastLessonAt = now;
    this.lastStepAt = now;
  }

  /** Pauses the destination until `until` (a block's back-off). */
  pause(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
    this.nextAt = Math.max(this.nextAt, this.pausedUntil);
  }

  /** Every clean step (no throttle): back toward the held pace, then probing above it. */
  private recover(now: number): void {
    if (this.rate !== null && this.ceiling > 0 && !this.settled && !this.probeAt && now - this.lastLessonAt < WINDOW_MS) {
      // Answers read late (see the top of this file): the receiver took at least this much.
      const took = this.took(now);
      if (took > this.ceiling) {
        this.ceiling = took;
        this.rate = Math.max(this.rate, this.hold()!);
      }
    }
    if (this.rate === null || now - this.lastStepAt < this.stepMs) return;
    this.lastStepAt = now;
    const hold = this.hold();
    if (this.probeAt) {
      // The probe passed a clean step: the receiver takes this pace.
      this.ceiling = this.rate / HOLD;
      this.probeAt = 0;
    }
    if (hold !== null && this.rate < hold) {
      this.rate = Math.min(hold, this.rate * RECOVERY_FACTOR);
      return;
    }
    if (this.ceiling === 0) {
      // Nothing learned (a block's halving is over): the configured limit, or none after a long clean stretch.
      if (this.limit === null && now - this.lastThrottleAt > FORGET_STEPS * this.stepMs) this.rate = null;
      else if (this.limit === null) this.rate *= RECOVERY_FACTOR;
      return;
    }
    if (this.settled && now - this.lastLessonAt < CAPPED_STEPS * this.stepMs) return;
    if (this.limit !== null && this.rate >= this.limit) return;
    this.lastGood = this.rate;
    this.rate = Math.min(this.rate * (this.settled ? PROBE_FACTOR : LEARN_FACTOR), this.limit ?? Number.POSITIVE_INFINITY);
    this.probeAt = now;
  }
}
