// "Send a test email" on a domain's page: one email from the domain to an address of the
// user's choosing (their own by default), sent through POST /v2/emails like any client's, then
// followed until it is delivered or fails, with a link to its page.
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useAction, useLoad, usePolling } from '../lib/hooks';
import { Link } from '../lib/router';
import { useOptionalSession } from '../session';
import { Badge, Button, ErrorBox, Field } from './ui';

const SETTLED = new Set(['delivered', 'bounced', 'failed', 'rejected', 'complained', 'canceled', 'suppressed']);

function SentTest({ id }: { id: string }) {
  const email = useLoad(() => ok(api.GET('/v2/emails/{id}', { params: { path: { id } } })), [id]);
  const status = email.data?.status;
  usePolling(email.reload, 1000, status === undefined || !SETTLED.has(status));
  return (
    <p role="status" class="test-result">
      Sent <Link href={`/emails/${id}`}>{email.data?.subject ?? id}</Link> to {email.data ? [email.data.to].flat().join(', ') : '…'}:{' '}
      <Badge value={status ?? 'accepted'} />
    </p>
  );
}

export function TestEmail({ domain }: { domain: { name: string; verification_status: string } }) {
  const session = useOptionalSession()?.session;
  const [to, setTo] = useState(session?.user.email ?? '');
  const [sentId, setSentId] = useState<string | null>(null);
  const send = useAction();
  const verified = domain.verification_status === 'verified';
  return (
    <form
      class="card"
      aria-labelledby="test-email-title"
      onSubmit={async (e) => {
        e.preventDefault();
        setSentId(null);
        const body = {
          from: `Postlane test <test@${domain.name}>`,
          to: to.trim(),
          subject: `Test email from ${domain.name}`,
          text: `This test email was sent from ${domain.name} through Postlane. If you can read it, sending works.`,
          html: `<p>This test email was sent from <strong>${domain.name}</strong> through Postlane.</p><p>If you can read it, sending works.</p>`,
        };
        const sent = await send.run(() => ok(api.POST('/v2/emails', { body })));
        if (sent) setSentId(sent.id);
      }}
    >
      <h2 id="test-email-title">Send a test email</h2>
      {verified ? null : <p class="muted">Verify the domain first: mail is sent only from a verified domain.</p>}
      <Field label="Send the test to">
        <input name="test-to" type="email" required value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
      </Field>
      <ErrorBox error={send.error} />
      <Button type="submit" kind="primary" busy={send.busy}>
        Send test email
      </Button>
      {sentId ? <SentTest key={sentId} id={sentId} /> : null}
    </form>
  );
}
