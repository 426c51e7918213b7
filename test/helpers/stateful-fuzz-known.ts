// Request shapes the stateful fuzzer does not send, or sets apart, because they hit findings
// that other changes are fixing in files this fuzzer's owners do not own. Each entry names the
// finding. Once those fixes are merged, EMPTY THIS LIST: the stateful-fuzz test and the `fuzz`
// bench then hold every request to the same bar.
import type { Outcome, StatefulRequest } from './stateful-fuzz.ts';

export interface KnownFinding {
  name: string;
  /** True: not sent at all (it stops the server answering, which would end the run). */
  withhold: boolean;
  /** Only on this database (both when unset). */
  only?: 'sqlite' | 'postgres';
  matches(request: StatefulRequest, outcome?: Outcome): boolean;
}

// Empty: the last entry, "a member role change freezes SQLite" (POST /v2/members/{id}, withheld
// on SQLite), went once its fix was merged. Add an entry only for a finding being fixed elsewhere.
export const KNOWN_UNTIL_MERGED: KnownFinding[] = [];

/** The known findings that apply on `dialect`. */
export function knownOn(dialect: 'sqlite' | 'postgres'): KnownFinding[] {
  return KNOWN_UNTIL_MERGED.filter((known) => !known.only || known.only === dialect);
}
