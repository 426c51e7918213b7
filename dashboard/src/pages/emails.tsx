// Emails: the list with status badges, search and filters; one email's timeline, headers, HTML
// (in a sandboxed frame: no scripts, no same origin), text, attachments and raw message, and
// the actions the API allows: cancel, reschedule, retry, forward.
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Badge, Button, Dialog, ErrorBox, Facts, Field, Loading, PageHeader, SearchBox, TableScroll } from '../components/ui';
import { Tabs } from '../components/Tabs';
import { FilterSelect } from '../components/FilterSelect';
import { DetailStatus } from '../components/DetailStatus';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction, useLoad } from '../lib/hooks';
import { present, useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import type { PageProps } from './index';
import { formatSeconds } from '../lib/time';

type Email = Ok<'/v2/emails/{id}', 'get'>;
const FINAL = ['bounced', 'failed', 'rejected', 'suppressed', 'complained', 'canceled'];
const STATUSES = [
  'accepted',
  'scheduled',
  'delivered',
  'loaded',
  'clicked',
  'attempted',
  'bounced',
  'failed',
  'rejected',
  'suppressed',
  'complained',
  'canceled',
  'held',
  'received',
];

export function Emails() {
  const list = useListPage({ type: 'outbound', status: '', date_from: '', date_to: '' }, ({ status, ...query }) =>
    // `status.exact` is the spec's filter grammar (key.condition=value), beyond the typed parameters.
    ok(api.GET('/v2/emails', { params: { query: present({ ...query, 'status.exact': status }) as never } })),
  );
  return (
    <>
      <PageHeader title="Emails" />
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search to, from, subject" />
        <FilterSelect
          list={list}
          name="type"
          label="Direction"
          options={[
            ['outbound', 'Sent'],
            ['inbound', 'Received'],
          ]}
        />
        <FilterSelect
          list={list}
          name="status"
          label="Status"
          options={[['', 'Any status'], ...STATUSES.map((s): [string, string] => [s, s])]}
        />
        <label class="field inline">
          <span class="label">From date</span>
          <input
            type="date"
            value={list.filters.date_from}
            onChange={(e) => list.setFilter('date_from', (e.target as HTMLInputElement).value)}
          />
        </label>
        <label class="field inline">
          <span class="label">To date</span>
          <input
            type="date"
            value={list.filters.date_to}
            onChange={(e) => list.setFilter('date_to', (e.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      <ListTable
        label="Emails"
        {...list.table}
        items={(data) => data.data}
        columns={['Subject', 'To', 'From', 'Status', 'Created']}
        empty={{
          title: 'No emails yet.',
          text: 'Emails are every message this workspace sends, through the API, the SMTP relay, campaigns and automations.',
          action: 'Send a test from a domain',
          href: '/domains',
        }}
        hasNext={nextPageUrl}
        row={(e) => (
          <tr>
            <td>
              <Link href={`/emails/${e.id}`}>{e.subject || '(no subject)'}</Link>
            </td>
            <td>{e.to}</td>
            <td>{e.from}</td>
            <td>
              <Badge value={e.status} />
            </td>
            <td>{formatDate(e.created_at)}</td>
          </tr>
        )}
      />
    </>
  );
}

function Timeline({ email }: { email: Email }) {
  const steps: Array<{ at: string; what: string; detail?: string; status?: string }> = [
    { at: email.created_at, what: 'Accepted', status: 'accepted' },
  ];
  if (email.scheduled_at) steps.push({ at: email.scheduled_at, what: 'Scheduled for', status: 'scheduled' });
  for (const attempt of email.attempts) {
    const code = [attempt.smtp_code, attempt.enhanced_code].filter(Boolean).join(' ');
    steps.push({
      at: attempt.attempted_at,
      what: `Delivery attempt: ${attempt.outcome}${attempt.mx_host ? ` at ${attempt.mx_host}` : ''}`,
      detail:
        attempt.response && code && attempt.response.startsWith(code)
          ? attempt.response
          : [code, attempt.response].filter(Boolean).join(' — '),
      status: attempt.outcome,
    });
  }
  if (email.delivered_at && !email.attempts.some((a) => a.outcome === 'delivered'))
    steps.push({ at: email.delivered_at, what: 'Delivered', status: 'delivered' });
  if (FINAL.includes(email.status)) steps.push({ at: email.updated_at, what: `Final status: ${email.status}`, status: email.status });
  steps.sort((a, b) => a.at.localeCompare(b.at));
  return (
    <ol class="timeline" aria-label="Timeline">
      {steps.map((s) => (
        <li>
          <time dateTime={s.at}>{formatSeconds(s.at)}</time> <Badge value={s.status} /> <span>{s.what}</span>
          {s.detail ? <div class="reason wrap">{s.detail}</div> : null}
        </li>
      ))}
    </ol>
  );
}

const BLOCKS = ['policy_block', 'reputation_block', 'content_spam'];
/** The kind of a bounce as people sort them: hard (will not go away), soft (may), block (refused because of the sender or content). */
function categoryOf(bounce: NonNullable<Email['bounce']>): string {
  if (bounce.reason === 'complaint') return 'Complaint (reported as spam)';
  if (BLOCKS.includes(bounce.reason)) return `Block (${bounce.type}): refused because of the sender or the content`;
  return bounce.type === 'hard' ? 'Hard bounce: will not go away by itself' : 'Soft bounce: may go away by itself';
}

/**
 * Why the email was not delivered, when it was not: the bounce reason and category, and the
 * receiving server's last refusal (SMTP code, enhanced code and text) with its host and time.
 */
function DeliveryProblem({ email }: { email: Email }) {
  const refusal = [...email.attempts].reverse().find((a) => a.outcome !== 'delivered' && (a.smtp_code !== null || a.response));
  if (!email.bounce && !refusal) return null;
  const code = refusal ? [refusal.smtp_code, refusal.enhanced_code].filter(Boolean).join(' ') : '';
  const text =
    refusal?.response && code && refusal.response.startsWith(code) ? refusal.response.slice(code.length).trim() : refusal?.response;
  const items: Array<[string, preact.ComponentChildren]> = [
    ...(email.bounce
      ? ([
          [
            'Bounce reason',
            <span data-fact="bounce-reason">
              <code>{email.bounce.reason}</code>
              {email.bounce.description ? ` — ${email.bounce.description}` : ''}
            </span>,
          ],
          ['Category', <span data-fact="bounce-category">{categoryOf(email.bounce)}</span>],
        ] as Array<[string, preact.ComponentChildren]>)
      : []),
    ...(refusal
      ? ([
          [
            'SMTP reply',
            <p class="reply" data-fact="smtp-reply">
              <strong>{code || 'No code'}</strong>
              {text ? ` ${text}` : ''}
            </p>,
          ],
          ['Receiving server', refusal.mx_host ? <code class="wrap">{refusal.mx_host}</code> : '—'],
          [
            'Attempt',
            <span>
              <time dateTime={refusal.attempted_at}>{formatSeconds(refusal.attempted_at)}</time> ({refusal.outcome})
            </span>,
          ],
        ] as Array<[string, preact.ComponentChildren]>)
      : []),
  ];
  return (
    <section aria-labelledby="problem-title" class="card problem">
      <h2 id="problem-title">
        {email.status === 'bounced' ? 'Why it bounced' : email.status === 'complained' ? 'Complaint' : 'Delivery problem'}
      </h2>
      <dl class="problem-facts">
        {items.map(([label, value]) => (
          <div>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

const TABS = ['Timeline', 'HTML', 'Text', 'Headers', 'Attachments', 'Raw'] as const;

function Raw({ id }: { id: string }) {
  const raw = useLoad(() => ok(api.GET('/v2/emails/{id}/raw', { params: { path: { id } } })), [id]);
  if (raw.loading) return <Loading />;
  if (raw.error) return <ErrorBox error={raw.error} />;
  return raw.data?.raw ? (
    <pre class="raw" tabIndex={0} aria-label="Raw message">
      {raw.data.raw}
    </pre>
  ) : (
    <p>The raw message was purged.</p>
  );
}

function Attachments({ id }: { id: string }) {
  const files = useLoad(() => ok(api.GET('/v2/emails/{id}/attachments', { params: { path: { id } } })), [id]);
  if (files.loading) return <Loading />;
  if (files.error) return <ErrorBox error={files.error} />;
  if (!files.data?.data) return <p>The attachments were purged.</p>;
  if (files.data.data.length === 0) return <p>No attachments.</p>;
  return (
    <ul class="plain-list">
      {files.data.data.map((f) => (
        <li>
          <a download={f.filename} href={`data:${f.content_type};base64,${f.content}`}>
            {f.filename}
          </a>{' '}
          <span class="muted">
            {f.content_type}, {f.size.toLocaleString()} bytes
          </span>
        </li>
      ))}
    </ul>
  );
}

function Headers({ headers }: { headers: Email['headers'] }) {
  if (!headers) return <p>The headers were purged.</p>;
  return (
    <TableScroll label="Headers">
      <tbody>
        {Object.entries(headers).flatMap(([name, value]) =>
          (Array.isArray(value) ? value : [value]).map((v) => (
            <tr>
              <th scope="row">{name}</th>
              <td class="wrap">{v}</td>
            </tr>
          )),
        )}
      </tbody>
    </TableScroll>
  );
}

export function EmailDetail({ params }: PageProps) {
  const email = useLoad(() => ok(api.GET('/v2/emails/{id}', { params: { path: { id: params.id } } })), [params.id]);
  const [tab, setTab] = useState<(typeof TABS)[number]>('Timeline');
  const [dialog, setDialog] = useState<'reschedule' | 'forward' | null>(null);
  const [when, setWhen] = useState('');
  const [forwardTo, setForwardTo] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  const e = email.data;
  const id = params.id;
  const done = async (message: string) => {
    setDialog(null);
    setNotice(message);
    await email.reload();
  };
  return (
    <>
      <PageHeader title={e ? e.subject || '(no subject)' : 'Email'}>
        {e ? (
          <>
            {e.status === 'scheduled' ? (
              <>
                <Button
                  busy={action.busy}
                  onClick={async () => {
                    if (await action.run(() => ok(api.POST('/v2/emails/{id}/cancel', { params: { path: { id } } }))))
                      await done('Canceled.');
                  }}
                >
                  Cancel
                </Button>
                <Button onClick={() => setDialog('reschedule')}>Reschedule</Button>
              </>
            ) : null}
            {['bounced', 'failed', 'suppressed', 'rejected', 'canceled'].includes(e.status) ? (
              <Button
                busy={action.busy}
                onClick={async () => {
                  const retried = await action.run(() => ok(api.POST('/v2/emails/{id}/retry', { params: { path: { id } } })));
                  if (retried) navigate(`/emails/${retried.id}`);
                }}
              >
                Retry
              </Button>
            ) : null}
            <Button onClick={() => setDialog('forward')}>Forward</Button>
          </>
        ) : null}
      </PageHeader>
      <DetailStatus back="/emails" backText="All emails" loading={email.loading} error={email.error ?? action.error} />
      {notice ? (
        <p role="status" class="notice">
          {notice}
        </p>
      ) : null}
      {e ? (
        <>
          <section class="card">
            <Facts
              items={[
                ['Status', <Badge value={e.status} />],
                ['From', <span class="wrap">{e.from}</span>],
                ['To', <span class="wrap">{e.to}</span>],
                ['Message-ID', <code class="wrap">{e.message_id}</code>],
                ['Created', <time dateTime={e.created_at}>{formatSeconds(e.created_at)}</time>],
                ['Delivered', e.delivered_at ? <time dateTime={e.delivered_at}>{formatSeconds(e.delivered_at)}</time> : '—'],
                ['Updated', <time dateTime={e.updated_at}>{formatSeconds(e.updated_at)}</time>],
                ['Size', e.size ? `${e.size.toLocaleString()} bytes` : null],
                ...(e.original_id
                  ? ([['Retry of', <Link href={`/emails/${e.original_id}`}>{e.original_id}</Link>]] as Array<
                      [string, preact.ComponentChildren]
                    >)
                  : []),
              ]}
            />
          </section>
          <DeliveryProblem email={e} />
          <Tabs label="Email details" tabs={TABS.map((t) => [t, t] as const)} selected={tab} onSelect={setTab} panelId="tab-panel">
            {tab === 'Timeline' ? <Timeline email={e} /> : null}
            {tab === 'HTML' ? (
              e.html ? (
                <iframe class="email-frame" title="HTML of the email" sandbox="" srcdoc={e.html} />
              ) : (
                <p>No HTML part.</p>
              )
            ) : null}
            {tab === 'Text' ? (
              e.text ? (
                <pre class="raw" tabIndex={0} aria-label="Text of the email">
                  {e.text}
                </pre>
              ) : (
                <p>No text part.</p>
              )
            ) : null}
            {tab === 'Headers' ? <Headers headers={e.headers} /> : null}
            {tab === 'Attachments' ? <Attachments id={id} /> : null}
            {tab === 'Raw' ? <Raw id={id} /> : null}
          </Tabs>
        </>
      ) : null}

      <Dialog title="Reschedule" open={dialog === 'reschedule'} onClose={() => setDialog(null)}>
        <form
          onSubmit={async (ev) => {
            ev.preventDefault();
            if (await action.run(() => ok(api.POST('/v2/emails/{id}', { params: { path: { id } }, body: { scheduled_at: when } }))))
              await done('Rescheduled.');
          }}
        >
          <Field label="Send at" hint="ISO 8601 or English, such as “tomorrow at 9am”">
            <input name="scheduled_at" required value={when} onInput={(ev) => setWhen((ev.target as HTMLInputElement).value)} />
          </Field>
          <ErrorBox error={action.error} />
          <Button type="submit" kind="primary" busy={action.busy}>
            Reschedule
          </Button>
        </form>
      </Dialog>
      <Dialog title="Forward" open={dialog === 'forward'} onClose={() => setDialog(null)}>
        <form
          onSubmit={async (ev) => {
            ev.preventDefault();
            if (await action.run(() => ok(api.POST('/v2/emails/{id}/forward', { params: { path: { id } }, body: { to: forwardTo } }))))
              await done(`Forwarded to ${forwardTo}.`);
          }}
        >
          <Field label="Forward to">
            <input
              type="email"
              name="forward_to"
              required
              value={forwardTo}
              onInput={(ev) => setForwardTo((ev.target as HTMLInputElement).value)}
            />
          </Field>
          <ErrorBox error={action.error} />
          <Button type="submit" kind="primary" busy={action.busy}>
            Forward
          </Button>
        </form>
      </Dialog>
    </>
  );
}
