// The outcome journal: each final SMTP answer (2xx delivered, 5xx bounced) is appended to a
// file of this process the moment it is read, before the batched commit that records it (see
// outcomes.ts, group commit). A process killed between the receiver's 250 and that commit
// leaves the 250 here; the next start applies it to the database before any delivery job is
// claimed (applyOutcomeJournals, called by src/server.ts), so the job that was cut off finds
// its email delivered and never sends it again.
//
// One file per process in DATA_DIR/delivery-journal, named `<pid>-<random>.jsonl`, one JSON
// line per outcome. A plain write(2) per outcome: a SIGKILL cannot undo a write the kernel has
// taken (no fsync; a power loss or a lost disk can still lose the last ones, see below). Lines
// are forgotten once their batch committed: the file is emptied whenever nothing is pending,
// and rewritten with only the pending lines when it has grown past ROTATE_BYTES.
//
// What it cannot cover: a journal lives on its machine. When a machine dies (or its disk is
// lost), the deliveries whose 250 was read but not committed run again on another worker once
// their lease ends. On SQLite (synchronous=NORMAL) a power loss can also drop the last commits.
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { DeliveryOutcome } from '../../../mail/smtp-delivery.ts';

/** The folder in DATA_DIR holding the journals. */
export const JOURNAL_DIR = 'delivery-journal';
/** A file past this size is rewritten with its pending lines only. */
const ROTATE_BYTES = 4 * 1024 * 1024;

/** One outcome as journaled: the email, the job that delivered it (and its worker), the answer. */
export interface JournalEntry {
  email: string;
  job: { id: number; lockedBy: string } | null;
  /** When the answer was read (ISO 8601). */
  at: string;
  outcome: DeliveryOutcome;
}

/** Journal files this process has open (tests run several apps in one process). */
const openHere = new Set<string>();

export class OutcomeJournal {
  readonly path: string;
  private fd: number;
  private bytes = 0;
  private readonly rotateBytes: number;
  /** Outcomes written and not yet committed, by email id. */
  private readonly pending = new Map<string, { line: string; entry: JournalEntry }>();

  constructor(dataDir: string, options: { rotateBytes?: number } = {}) {
    this.rotateBytes = options.rotateBytes ?? ROTATE_BYTES;
    const dir = join(dataDir, JOURNAL_DIR);
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, `${process.pid}-${randomBytes(6).toString('hex')}.jsonl`);
    this.fd = openSync(this.path, 'a');
    openHere.add(this.path);
  }

  /** Writes the outcome at once (one write system call); `committed` forgets it. */
  append(entry: JournalEntry): void {
    const line = `${JSON.stringify(entry)}\n`;
    this.write(line);
    this.pending.set(entry.email, { line, entry });
  }

  /** An outcome of `emailId` this process read but has not committed yet. */
  pendingFor(emailId: string): JournalEntry | undefined {
    return this.pending.get(emailId)?.entry;
  }

  /** The outcome of `emailId` is in the database: its line is no longer needed. */
  committed(emailId: string): void {
    if (!this.pending.delete(emailId)) return;
    if (this.pending.size === 0) {
      // Nothing pending: the file starts over (O_APPEND writes go to the new end).
      ftruncateSync(this.fd, 0);
      this.bytes = 0;
    } else if (this.bytes > this.rotateBytes) {
      this.rotate();
    }
  }

  /** Closes the file; removes it when nothing is pending (else the next start applies it). */
  close(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
    openHere.delete(this.path);
    if (this.pending.size === 0) unlinkSync(this.path);
  }

  private write(text: string): void {
    const buffer = Buffer.from(text);
    let written = 0;
    while (written < buffer.length) written += writeSync(this.fd, buffer, written);
    this.bytes += buffer.length;
  }

  // The pending lines go to a new file that then takes the old one's name (rename is atomic: a
  // crash leaves either file whole, and applying a line twice changes nothing).
  private rotate(): void {
    const next = `${this.path}.next`;
    const fd = openSync(next, 'w');
    const text = Buffer.from([...this.pending.values()].map((p) => p.line).join(''));
    let written = 0;
    while (written < text.length) written += writeSync(fd, text, written);
    closeSync(fd);
    renameSync(next, this.path);
    closeSync(this.fd);
    this.fd = openSync(this.path, 'a');
    this.bytes = fstatSync(this.fd).size;
  }
}

/** Whether process `pid` runs (on this machine). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The journals left by processes that are gone: none open here, none of a running process.
 *  A file carrying this process's own pid is a previous run's (containers reuse pids). */
export function orphanedJournals(dataDir: string): string[] {
  const dir = join(dataDir, JOURNAL_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => /^\d+-[0-9a-f]+\.jsonl(\.next)?$/.test(name))
    .map((name) => ({ path: join(dir, name), pid: Number(name.split('-')[0]) }))
    .filter(({ path, pid }) => !openHere.has(path) && !openHere.has(path.replace(/\.next$/, '')) && (pid === process.pid || !alive(pid)))
    .map(({ path }) => path);
}

/** The entries of a journal file, in order; a torn last line (power loss) is skipped. */
export function readJournal(path: string): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      const entry = JSON.parse(line) as JournalEntry;
      if (typeof entry?.email === 'string' && entry.outcome && typeof entry.outcome.kind === 'string') entries.push(entry);
    } catch {
      // a partial line: the write it came from never completed
    }
  }
  return entries;
}
