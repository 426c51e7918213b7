// An automation's row and the graph and settings stored in it as JSON (offered to the others by
// service.ts; kept apart so the engine and the actions read them without loading the service).
import type { Selectable } from 'kysely';
import { DEFAULT_SETTINGS, type Connection, type Settings, type Step } from './graph.ts';
import type { AutomationsTable } from './tables.ts';

export type AutomationRow = Selectable<AutomationsTable>;

export const stepsOf = (row: AutomationRow) => JSON.parse(row.steps) as Step[];
export const connectionsOf = (row: AutomationRow) => JSON.parse(row.connections) as Connection[];
export const settingsOf = (row: AutomationRow) => ({ ...DEFAULT_SETTINGS, ...(JSON.parse(row.settings) as Partial<Settings>) });
