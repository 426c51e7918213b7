// Warnings about the server's own setup, from the session's `server` (GET /auth/session): a
// banner on every page while PUBLIC_URL or MAIL_HOSTNAME is a name only this machine knows, and
// a note on each DNS record that points at such a name.
import { useOptionalSession } from '../session';

export function LocalNamesBanner() {
  const server = useOptionalSession()?.session.server;
  if (!server || server.local_settings.length === 0) return null;
  return (
    <section class="banner warning" aria-labelledby="local-names-title">
      <h2 id="local-names-title">This server is set up with local names</h2>
      <p>Mail and links will not work beyond this machine until these are set (in the server's environment, then restart it):</p>
      <ul>
        {server.local_settings.map((s) => (
          <li>
            <code>{s.variable}</code> is <code>{s.value}</code>. {s.advice}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A note under a DNS record whose value names a local host (the records embed MAIL_HOSTNAME). */
export function LocalRecordWarning({ value }: { value: string }) {
  const hosts = useOptionalSession()?.session.server.local_record_hosts ?? [];
  const host = hosts.find((h) => value === h || value.includes(`:${h}`) || value.includes(` ${h}`) || value.endsWith(h));
  if (!host) return null;
  return (
    <div class="record-warning small-text">
      Warning: <code>{host}</code> is a local name, so receivers cannot use this record. Set <code>MAIL_HOSTNAME</code> to this server's
      public name (or the record's own variable, such as <code>RETURN_PATH_HOST</code> or <code>SPF_INCLUDE_HOST</code>), restart, and
      publish the record again.
    </div>
  );
}
