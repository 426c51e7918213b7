// Which emitted events fire which triggers. The catalogue's triggers come from graph.ts
// (TRIGGER_SOURCES); in the `event` context a trigger `event.w:<name>` or `event.c:<name>` is
// fired by the workspace or custom event of that type
// (https://emailit.com/docs/events/ "Three scopes of events").
import { isCustomEventType } from '../events/service.ts';
import { TRIGGER_SOURCES } from './graph.ts';

const CATALOGUE_SOURCES = new Set(Object.values(TRIGGER_SOURCES).flat());

/** The product event type an event-context trigger waits for, or null. */
export function productEventOfTrigger(trigger: string): string | null {
  const type = trigger.startsWith('event.') ? trigger.slice('event.'.length) : '';
  return isCustomEventType(type) ? type : null;
}

/** The event types that fire `trigger`. */
export function sourcesOfTrigger(trigger: string): string[] {
  const product = productEventOfTrigger(trigger);
  return product ? [product] : (TRIGGER_SOURCES[trigger] ?? []);
}

/** Whether an event of `type` may fire any trigger (the rest are never looked up). */
export function firesTriggers(type: string): boolean {
  return CATALOGUE_SOURCES.has(type) || isCustomEventType(type);
}
