// At start, before any delivery job is claimed: the outcomes that processes killed on this
// machine had read but not committed (journal.ts) are recorded, then their files removed. A
// crash while applying leaves the file; applying it again at the next start changes nothing.
import { unlinkSync } from 'node:fs';
import type { Db } from '../../../platform/db/database.ts';
import { orphanedJournals, readJournal } from './journal.ts';
import { applyJournaledOutcome } from './outcomes.ts';

export interface JournalReplay {
  files: number;
  /** Outcomes read from them. */
  outcomes: number;
  /** Of them, outcomes the database did not have yet (their commit was cut off). */
  recorded: number;
}

export async function applyOutcomeJournals(db: Db, dataDir: string): Promise<JournalReplay> {
  const replay: JournalReplay = { files: 0, outcomes: 0, recorded: 0 };
  for (const path of orphanedJournals(dataDir)) {
    for (const entry of readJournal(path)) {
      replay.outcomes++;
      if (await applyJournaledOutcome(db, entry.email, entry.outcome, entry.at, entry.job)) replay.recorded++;
    }
    unlinkSync(path);
    replay.files++;
  }
  return replay;
}
