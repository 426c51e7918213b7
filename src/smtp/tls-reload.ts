// Renewed certificates without a restart: the files SMTP_TLS_CERT and SMTP_TLS_KEY name are
// watched, and a new pair is handed to the listeners, which use it for new TLS sessions while
// sessions already open go on with the old one. The directories are watched (fs.watch), not
// the files: certbot and acme.sh replace files (or the symlinks in certbot's live/ folder) by
// rename, which a watch on the old file never sees. A stat of both files every few seconds
// catches what fs.watch misses (network file systems, inotify limits). Changes are debounced,
// since a renewal writes several files; a pair whose key does not match its certificate
// (caught half-written) is read again once after a pause, then refused with a warning, and
// the previous pair stays in use.
import { statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { X509Certificate } from 'node:crypto';
import type { Logger } from 'pino';
import { readConfiguredPair, type TlsMaterial } from './tls.ts';

export interface TlsWatchOptions {
  /** Quiet time after the last change before the files are read. */
  debounceMs?: number;
  /** How often both files are stat'ed, in case fs.watch missed a change. */
  pollMs?: number;
  /** Pause before a mismatched pair is read a second time (the other file may be on its way). */
  settleMs?: number;
  /** false: rely on the periodic stat alone. */
  useFsWatch?: boolean;
}

export interface TlsWatch {
  close(): void;
}

/** What to log about a certificate: never the key. */
export function describeCertificate(x509: X509Certificate) {
  return {
    subject: x509.subject.replace(/\n/g, ', '),
    serial: x509.serialNumber,
    expires_at: new Date(x509.validTo).toISOString(),
  };
}

function stamp(files: string[]): string {
  return files
    .map((file) => {
      try {
        const stat = statSync(file); // follows symlinks: a re-pointed certbot link changes it
        return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
      } catch {
        return 'missing';
      }
    })
    .join('|');
}

/**
 * Watches `files` and calls `apply` with each new usable pair. `current` is the pair in use;
 * an unchanged pair (a touch, a rewrite with the same content) is not applied again.
 */
export function watchTlsFiles(
  files: { cert: string; key: string },
  current: Pick<TlsMaterial, 'key' | 'cert'>,
  log: Logger,
  apply: (pair: { key: string; cert: string; x509: X509Certificate }) => void,
  options: TlsWatchOptions = {},
): TlsWatch {
  const { debounceMs = 300, pollMs = 10_000, settleMs = 2000, useFsWatch = true } = options;
  const paths = [resolve(files.cert), resolve(files.key)];
  const where = { cert_file: files.cert, key_file: files.key };
  let inUse = { key: current.key, cert: current.cert };
  let seen = stamp(paths);
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const schedule = (delayMs: number, retry: boolean) => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => reload(retry), delayMs);
    timer.unref();
  };

  function reload(retry: boolean) {
    timer = null;
    seen = stamp(paths);
    let pair;
    try {
      pair = readConfiguredPair(files.cert, files.key);
    } catch (error) {
      if (!retry) return schedule(settleMs, true);
      log.warn(
        { ...where, error: (error as Error).message },
        'the TLS certificate files changed but cannot be used; the previous certificate stays in use',
      );
      return;
    }
    if (pair.cert === inUse.cert && pair.key === inUse.key) return;
    try {
      apply(pair);
    } catch (error) {
      log.warn(
        { ...where, error: (error as Error).message },
        'the new TLS certificate could not be applied; the previous certificate stays in use',
      );
      return;
    }
    inUse = { key: pair.key, cert: pair.cert };
    log.info({ ...where, ...describeCertificate(pair.x509) }, 'TLS certificate reloaded');
  }

  const watchers: FSWatcher[] = [];
  if (useFsWatch) {
    const names = new Map<string, Set<string>>();
    for (const path of paths) names.set(dirname(path), (names.get(dirname(path)) ?? new Set()).add(basename(path)));
    for (const [directory, watched] of names) {
      try {
        const watcher = watch(directory, { persistent: false }, (_event, filename) => {
          if (!filename || watched.has(String(filename))) schedule(debounceMs, false);
        });
        // A watch that breaks (directory removed, inotify limits) leaves the periodic stat.
        watcher.on('error', (error) => {
          log.debug({ directory, err: error }, 'watching the TLS certificate directory stopped; checking it periodically instead');
          watcher.close();
        });
        watchers.push(watcher);
      } catch (error) {
        log.debug({ directory, err: error }, 'cannot watch the TLS certificate directory; checking it periodically instead');
      }
    }
  }
  const poll = setInterval(() => {
    if (!timer && stamp(paths) !== seen) schedule(debounceMs, false);
  }, pollMs);
  poll.unref();

  return {
    close() {
      closed = true;
      clearInterval(poll);
      if (timer) clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}
