// Email verification: one address checked at once (fast or full) with every check behind its
// result; verification lists (create, status filter) and one list's progress while it is
// verified, its results as a chart and a table, and its export (XLSX or CSV).
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { StackedBar, type Segment } from '../components/Chart';
import { Badge, Button, ErrorBox, Facts, Field, Loading, PageHeader, Progress, Select } from '../components/ui';
import { FilterSelect } from '../components/FilterSelect';
import { FormDialog } from '../components/FormDialog';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction, useLoad, usePolling } from '../lib/hooks';
import { useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import type { PageProps } from './index';

type Verification = Ok<'/v2/email-verifications', 'post'>;
type VerificationList = Ok<'/v2/email-verification-lists/{id}', 'get'>;

const RESULT_COLORS: Array<[keyof VerificationList['stats']['results'], string, string]> = [
  ['safe', 'Safe', '#1f7a3a'],
  ['role', 'Role', '#5b3cc4'],
  ['unknown', 'Unknown', '#6b7280'],
  ['inbox_full', 'Inbox full', '#b45309'],
  ['disabled', 'Disabled', '#9d174d'],
  ['disposable', 'Disposable', '#c2410c'],
  ['invalid', 'Invalid', '#b3261e'],
];

const yesNo = (value: boolean | null | undefined) => (value === null || value === undefined ? 'Unknown' : value ? 'Yes' : 'No');

function VerificationResult({ v }: { v: Verification }) {
  const c = v.checks;
  return (
    <section aria-labelledby="result-title">
      <h3 id="result-title">
        {v.email}: <Badge value={v.result ?? v.status} />
      </h3>
      {v.did_you_mean ? <p>Did you mean {v.did_you_mean}?</p> : null}
      <Facts
        items={[
          ['Score', v.score === null ? '—' : `${v.score} of 100`],
          ['Risk', v.risk ?? '—'],
          ['Mode', v.mode],
          ['Valid syntax', yesNo(c?.valid_syntax)],
          ['MX records', v.mx_records.length ? v.mx_records.map((m) => `${m.exchange} (${m.priority})`).join(', ') : 'None'],
          ['Disposable', yesNo(c?.disposable)],
          ['Role account', yesNo(c?.role_account)],
          ['Free provider', yesNo(c?.free_email)],
          ['Looks random', yesNo(c?.gibberish)],
          ['Server accepted it', yesNo(c?.deliverable)],
          ['Catch-all domain', yesNo(c?.catch_all)],
          [
            'Mailbox check',
            v.mailbox_check
              ? `${v.mailbox_check.outcome}${v.mailbox_check.code ? ` (${v.mailbox_check.code})` : ''}: ${v.mailbox_check.message}`
              : 'Not asked',
          ],
        ]}
      />
    </section>
  );
}

function SingleCheck() {
  const [email, setEmail] = useState('');
  const [mode, setMode] = useState<'fast' | 'full'>('fast');
  const [result, setResult] = useState<Verification | null>(null);
  const check = useAction();
  return (
    <section class="card" aria-labelledby="single-title">
      <h2 id="single-title">Check one address</h2>
      <form
        class="inline-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setResult(null);
          const answer = await check.run(() => ok(api.POST('/v2/email-verifications', { body: { email, mode } })));
          if (answer) setResult(answer);
        }}
      >
        <Field label="Address">
          <input name="email" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </Field>
        <Select
          label="Mode"
          value={mode}
          onChange={(v) => setMode(v as 'fast' | 'full')}
          options={[
            ['fast', 'Fast: no mailbox check'],
            ['full', 'Full: ask the mail server'],
          ]}
        />
        <Button type="submit" kind="primary" busy={check.busy}>
          Check
        </Button>
      </form>
      <p class="muted small-text">5 credits per check.</p>
      {check.busy ? <Loading label="Checking…" /> : null}
      <ErrorBox error={check.error} />
      {result ? <VerificationResult v={result} /> : null}
    </section>
  );
}

export function Verification() {
  const list = useListPage({ status: '', order: 'created_at', direction: 'desc' }, (query) =>
    ok(api.GET('/v2/email-verification-lists', { params: { query: query as never } })),
  );
  const [adding, setAdding] = useState(false);
  const [name, setName] = useState('');
  const [emails, setEmails] = useState('');
  const add = useAction();
  return (
    <>
      <PageHeader title="Email verification">
        <Button kind="primary" onClick={() => setAdding(true)}>
          New list
        </Button>
      </PageHeader>
      <SingleCheck />
      <section aria-labelledby="lists-title">
        <h2 id="lists-title">Lists</h2>
        <div class="toolbar">
          <FilterSelect
            list={list}
            name="status"
            label="Status"
            options={[
              ['', 'All'],
              ['processing', 'Processing'],
              ['completed', 'Completed'],
            ]}
          />
          <FilterSelect
            list={list}
            name="direction"
            label="Order"
            options={[
              ['desc', 'Newest first'],
              ['asc', 'Oldest first'],
            ]}
          />
        </div>
        <ListTable
          label="Verification lists"
          {...list.table}
          items={(data) => data.data}
          columns={['Name', 'Status', 'Addresses', 'Safe', 'Invalid', 'Created']}
          empty={{
            title: 'No lists yet.',
            text: 'A verification list checks addresses for ones that would bounce, before you send to them.',
            action: 'Check your first list',
            onAction: () => setAdding(true),
          }}
          hasNext={nextPageUrl}
          row={(l) => (
            <tr>
              <td>
                <Link href={`/verification/${l.id}`}>{l.name}</Link>
              </td>
              <td>
                <Badge value={l.status} />
              </td>
              <td>{l.stats.total_emails.toLocaleString()}</td>
              <td>{l.status === 'completed' ? l.stats.results.safe.toLocaleString() : '—'}</td>
              <td>{l.status === 'completed' ? l.stats.results.invalid.toLocaleString() : '—'}</td>
              <td>{formatDate(l.created_at)}</td>
            </tr>
          )}
        />
      </section>
      <FormDialog
        title="New verification list"
        open={adding}
        onClose={() => setAdding(false)}
        action={add}
        submit="Verify the list"
        onSubmit={async () => {
          const addresses = emails.split(/[\s,;]+/).filter(Boolean);
          const created = await add.run(() => ok(api.POST('/v2/email-verification-lists', { body: { name, emails: addresses } })));
          if (created) navigate(`/verification/${created.id}`);
        }}
      >
        <Field label="Name">
          <input name="name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Field
          label="Addresses"
          hint="Up to 10,000, one per line (or separated by commas); 5 credits per unique address, verified in full mode"
        >
          <textarea rows={8} required value={emails} onInput={(e) => setEmails((e.target as HTMLTextAreaElement).value)} />
        </Field>
      </FormDialog>
    </>
  );
}

// A list's counts keep their starting values until every address is done, so
// progress is counted from the results themselves for lists of up to this many addresses.
const COUNTED_PROGRESS = 1000;

async function countDone(id: string, total: number): Promise<number> {
  const pages = Math.ceil(total / 100);
  const answers = await Promise.all(
    Array.from({ length: pages }, (_, i) =>
      ok(api.GET('/v2/email-verification-lists/{id}/results', { params: { path: { id }, query: { page: i + 1, limit: 100 } } })),
    ),
  );
  return answers.reduce((sum, a) => sum + a.data.filter((v) => v.status !== 'pending').length, 0);
}

export function VerificationListDetail({ params }: PageProps) {
  const list = useLoad(() => ok(api.GET('/v2/email-verification-lists/{id}', { params: { path: { id: params.id } } })), [params.id]);
  const [page, setPage] = useState(1);
  const results = useLoad(
    () => ok(api.GET('/v2/email-verification-lists/{id}/results', { params: { path: { id: params.id }, query: { page, limit: 50 } } })),
    [params.id, page],
  );
  const [done, setDone] = useState<number | null>(null);
  const l = list.data;
  const processing = l?.status === 'processing';
  // While it is verified: the list and its progress again every second, until completed (one
  // round at a time: on a slow server the rounds never pile up and overtake each other).
  usePolling(
    async () => {
      if (!l) return;
      if (l.stats.total_emails <= COUNTED_PROGRESS) setDone(await countDone(l.id, l.stats.total_emails).catch(() => null));
      await Promise.all([list.reload(), results.reload()]);
    },
    1000,
    processing,
  );
  const segments: Segment[] = l ? RESULT_COLORS.map(([key, label, color]) => ({ label, value: l.stats.results[key], color })) : [];
  return (
    <>
      <PageHeader title={l ? `List: ${l.name}` : 'Verification list'}>
        {l && !processing ? (
          <>
            <a class="button" href={`/v2/email-verification-lists/${l.id}/export?format=xlsx`} download>
              Export XLSX
            </a>
            <a class="button" href={`/v2/email-verification-lists/${l.id}/export?format=csv`} download>
              Export CSV
            </a>
          </>
        ) : null}
      </PageHeader>
      <p>
        <Link href="/verification">Email verification</Link>
      </p>
      {list.loading && !l ? <Loading /> : null}
      <ErrorBox error={list.error} />
      {l ? (
        <>
          <section class="card" aria-labelledby="progress-title">
            <h2 id="progress-title">
              Progress <Badge value={l.status} />
            </h2>
            {processing ? (
              <Progress
                label="Verification progress"
                value={done === null ? undefined : done / Math.max(1, l.stats.total_emails)}
                text={
                  done === null
                    ? `Verifying ${l.stats.total_emails.toLocaleString()} addresses…`
                    : `${done.toLocaleString()} of ${l.stats.total_emails.toLocaleString()} addresses verified`
                }
              />
            ) : (
              <Progress
                label="Verification progress"
                value={1}
                text={`${l.stats.processed_emails.toLocaleString()} of ${l.stats.total_emails.toLocaleString()} addresses verified`}
              />
            )}
            <Facts
              items={[
                ['Addresses', l.stats.total_emails.toLocaleString()],
                ['Verified', processing ? '—' : l.stats.successful_verifications.toLocaleString()],
                ['Could not be verified', processing ? '—' : l.stats.failed_verifications.toLocaleString()],
                ['Created', formatDate(l.created_at)],
              ]}
            />
          </section>
          <section class="card" aria-labelledby="results-chart-title">
            <h2 id="results-chart-title">Results</h2>
            {processing ? (
              <p class="muted">The counts arrive when every address is verified.</p>
            ) : (
              <>
                <StackedBar title="Addresses by result" segments={segments} />
                <p class="small-text">
                  Of them on catch-all domains (the server accepts any address): {l.stats.results.catch_all.toLocaleString()}
                </p>
              </>
            )}
          </section>
        </>
      ) : null}
      <section aria-labelledby="addresses-title">
        <h2 id="addresses-title">Addresses</h2>
        <ListTable
          label="Addresses and results"
          loaded={results}
          quiet
          items={(data) => data.data}
          columns={['Address', 'Result', 'Score', 'Risk', 'Mailbox check']}
          empty="No addresses."
          page={page}
          onPage={setPage}
          hasNext={nextPageUrl}
          row={(v) => (
            <tr>
              <td>{v.email}</td>
              <td>
                <Badge value={v.result ?? v.status} />
              </td>
              <td>{v.score ?? '—'}</td>
              <td>{v.risk ?? '—'}</td>
              <td class="wrap">{v.mailbox_check ? `${v.mailbox_check.outcome}: ${v.mailbox_check.message}` : '—'}</td>
            </tr>
          )}
        />
      </section>
    </>
  );
}
