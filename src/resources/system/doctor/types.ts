// What one doctor check reports. `fail` is a blocker: mail will not be delivered, or not
// accepted by the large receivers, until it is fixed; `warn` hurts deliverability or safety;
// `skip` means the check could not run here (no network, nothing to check).
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

export interface DoctorCheck {
  /** Stable identifier, `name` or `name:subject` (e.g. `dmarc:example.com`). */
  id: string;
  status: CheckStatus;
  /** What was found. */
  found: string;
  /** What to do about it; null when nothing needs doing. */
  fix: string | null;
}

export interface DoctorReport {
  /** The worst status of all checks (`skip` counts as pass). */
  status: 'pass' | 'warn' | 'fail';
  checked_at: string;
  checks: DoctorCheck[];
}

export const pass = (id: string, found: string): DoctorCheck => ({ id, status: 'pass', found, fix: null });
export const warn = (id: string, found: string, fix: string): DoctorCheck => ({ id, status: 'warn', found, fix });
export const fail = (id: string, found: string, fix: string): DoctorCheck => ({ id, status: 'fail', found, fix });
export const skip = (id: string, found: string): DoctorCheck => ({ id, status: 'skip', found, fix: null });

/** How long a network probe (port 25, the clock's HTTP request) may take. */
export const PROBE_TIMEOUT_MS = 5000;
