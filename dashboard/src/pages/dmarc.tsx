// DMARC reports of one domain: the period's pass rates, a chart of passes and fails by sending
// source, the reports list (type and status filters, paging) with one report's rows, and a
// report file uploaded by hand. Collection is switched on per domain (the domain's settings).
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { StackedBar } from '../components/Chart';
import {
  Badge,
  Button,
  CopyButton,
  Dialog,
  ErrorBox,
  Facts,
  Field,
  Loading,
  PageHeader,
  Pager,
  Select,
  TableScroll,
} from '../components/ui';
import { ListTable } from '../components/ListTable';
import { formatDate, useAction, useLoad } from '../lib/hooks';
import { present } from '../lib/list';
import { Link } from '../lib/router';

type Report = Ok<'/v2/domains/{id}/dmarc/reports/{report_id}', 'get'>;
const PASS = '#1f7a3a';
const FAIL = '#b3261e';
const PAGE = 25;

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);

function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(new Error('The file could not be read'));
    reader.readAsDataURL(file);
  });
}

function Upload({ domainId, onDone }: { domainId: string; onDone: (report: Report) => void }) {
  const [file, setFile] = useState<File | null>(null);
  const send = useAction();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (!file) return;
        const report = await send.run(async () =>
          ok(
            api.POST('/v2/domains/{id}/dmarc/reports', {
              params: { path: { id: domainId } },
              body: { content: await readBase64(file), filename: file.name },
            }),
          ),
        );
        if (report) onDone(report);
      }}
    >
      <Field label="Report file" hint="Aggregate XML (plain, .gz or .zip), or a whole report mail (.eml)">
        <input type="file" name="file" required onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
      </Field>
      <ErrorBox error={send.error} />
      <Button type="submit" kind="primary" busy={send.busy} disabled={!file}>
        Upload
      </Button>
    </form>
  );
}

function ReportView({ report }: { report: Report }) {
  return (
    <>
      <Facts
        items={[
          ['Status', <Badge value={report.status} />],
          ['Type', report.type],
          ['Reporter', report.org_name ?? '—'],
          ['Period', `${formatDate(report.period_start)} – ${formatDate(report.period_end)}`],
          ['Messages', report.message_count.toLocaleString()],
          ['DMARC pass rate', percent(report.pass_rate)],
          ['Why not read', report.failure_reason ?? '—'],
        ]}
      />
      {report.type === 'aggregate' && report.records.length > 0 ? (
        <TableScroll label="Report rows">
          <thead>
            <tr>
              <th scope="col">Source IP</th>
              <th scope="col">Messages</th>
              <th scope="col">DMARC</th>
              <th scope="col">SPF</th>
              <th scope="col">DKIM</th>
              <th scope="col">Disposition</th>
            </tr>
          </thead>
          <tbody>
            {report.records.map((r) => (
              <tr>
                <td>{r.source_ip}</td>
                <td>{r.count.toLocaleString()}</td>
                <td>
                  <Badge value={r.dmarc} />
                </td>
                <td>
                  <Badge value={r.spf} />
                </td>
                <td>
                  <Badge value={r.dkim} />
                </td>
                <td>{r.disposition}</td>
              </tr>
            ))}
          </tbody>
        </TableScroll>
      ) : null}
      {report.type === 'forensic' ? (
        <Facts
          items={[
            ['Failed', report.auth_failure ?? '—'],
            ['Source IP', report.source_ip ?? '—'],
            ['From', report.original_message.from ?? '—'],
            ['Subject', report.original_message.subject ?? '—'],
          ]}
        />
      ) : null}
    </>
  );
}

function DomainReports({ domainId }: { domainId: string }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [type, setType] = useState('');
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);
  const [uploading, setUploading] = useState(false);
  const [open, setOpen] = useState<Report | null>(null);
  const [generation, setGeneration] = useState(0);
  const period = present({ from, to });
  const path = { id: domainId };
  const summary = useLoad(
    () => ok(api.GET('/v2/domains/{id}/dmarc/stats/results', { params: { path, query: { ...period, limit: 1 } } })),
    [domainId, from, to, generation],
  );
  const sources = useLoad(
    () => ok(api.GET('/v2/domains/{id}/dmarc/stats/sources', { params: { path, query: { ...period, limit: 20 } } })),
    [domainId, from, to, generation],
  );
  const countries = useLoad(
    () => ok(api.GET('/v2/domains/{id}/dmarc/stats/countries', { params: { path, query: { ...period, limit: 10 } } })),
    [domainId, from, to, generation],
  );
  const networks = useLoad(
    () => ok(api.GET('/v2/domains/{id}/dmarc/stats/networks', { params: { path, query: { ...period, limit: 10 } } })),
    [domainId, from, to, generation],
  );
  const reports = useLoad(
    () =>
      ok(
        api.GET('/v2/domains/{id}/dmarc/reports', {
          params: { path, query: present({ ...period, type, status, limit: PAGE, offset: (page - 1) * PAGE }) as never },
        }),
      ),
    [domainId, from, to, type, status, page, generation],
  );
  const detail = useAction();
  const s = summary.data?.summary;
  return (
    <>
      <div class="toolbar">
        <Field label="From">
          <input
            type="date"
            value={from}
            onInput={(e) => {
              setFrom((e.target as HTMLInputElement).value);
              setPage(1);
            }}
          />
        </Field>
        <Field label="To">
          <input
            type="date"
            value={to}
            onInput={(e) => {
              setTo((e.target as HTMLInputElement).value);
              setPage(1);
            }}
          />
        </Field>
        <Button onClick={() => setUploading(true)}>Upload a report</Button>
      </div>
      <section class="card" aria-labelledby="rates-title">
        <h2 id="rates-title">Pass rates</h2>
        {summary.loading && !s ? <Loading /> : null}
        <ErrorBox error={summary.error} />
        {s ? (
          <Facts
            items={[
              ['Messages', s.message_count.toLocaleString()],
              ['DMARC', `${percent(s.dmarc.pass_rate)} pass`],
              ['Aligned SPF', `${percent(s.spf.pass_rate)} pass`],
              ['Aligned DKIM', `${percent(s.dkim.pass_rate)} pass`],
              ['Quarantined', s.dispositions.quarantine.toLocaleString()],
              ['Rejected', s.dispositions.reject.toLocaleString()],
            ]}
          />
        ) : null}
      </section>
      <section class="card" aria-labelledby="sources-title">
        <h2 id="sources-title">DMARC pass and fail by source</h2>
        {sources.loading && !sources.data ? <Loading /> : null}
        <ErrorBox error={sources.error} />
        {sources.data?.data.length === 0 ? <p class="muted">No messages reported in this period.</p> : null}
        {sources.data?.data.map((row) => (
          <StackedBar
            title={`${row.source_ip} (${row.reporter_count} ${row.reporter_count === 1 ? 'reporter' : 'reporters'})`}
            segments={[
              { label: 'Pass', value: row.dmarc.pass, color: PASS },
              { label: 'Fail', value: row.dmarc.fail, color: FAIL },
            ]}
          />
        ))}
      </section>
      <section class="card" aria-labelledby="places-title">
        <h2 id="places-title">DMARC pass and fail by country and network</h2>
        <ErrorBox error={countries.error ?? networks.error} />
        {(countries.loading && !countries.data) || (networks.loading && !networks.data) ? <Loading /> : null}
        {countries.data?.data.map((row) => (
          <StackedBar
            title={`${row.country ?? 'Unknown country'} (${row.source_count} ${row.source_count === 1 ? 'source' : 'sources'})`}
            segments={[
              { label: 'Pass', value: row.dmarc.pass, color: PASS },
              { label: 'Fail', value: row.dmarc.fail, color: FAIL },
            ]}
          />
        ))}
        {networks.data?.data.map((row) => (
          <StackedBar
            title={row.asn === null ? 'Unknown network' : `AS${row.asn} ${row.organization ?? ''}`.trim()}
            segments={[
              { label: 'Pass', value: row.dmarc.pass, color: PASS },
              { label: 'Fail', value: row.dmarc.fail, color: FAIL },
            ]}
          />
        ))}
        <p class="muted">IP location data: ip-location-db (CC0; ASN data by RouteViews, DB-IP.com and NRO, CC BY 4.0).</p>
      </section>
      <section aria-labelledby="reports-title">
        <h2 id="reports-title">Reports</h2>
        <div class="toolbar">
          <Select
            label="Type"
            value={type}
            onChange={(v) => {
              setType(v);
              setPage(1);
            }}
            options={[
              ['', 'All types'],
              ['aggregate', 'Aggregate'],
              ['forensic', 'Forensic'],
            ]}
          />
          <Select
            label="Report status"
            value={status}
            onChange={(v) => {
              setStatus(v);
              setPage(1);
            }}
            options={[
              ['', 'All'],
              ['processed', 'Processed'],
              ['pending', 'Pending'],
              ['failed', 'Failed'],
              ['duplicate', 'Duplicate'],
            ]}
          />
        </div>
        <ErrorBox error={detail.error} />
        <ListTable
          label="DMARC reports"
          loaded={reports}
          items={(data) => data.data}
          columns={['Reporter', 'Period', 'Type', 'Messages', 'Pass rate', 'Status', 'Arrived']}
          empty={{
            title: 'No reports in this period.',
            text: 'DMARC reports come from receivers and say who sends mail as your domains and whether it passes.',
            action: 'Upload your first report',
            onAction: () => setUploading(true),
          }}
          row={(r) => (
            <tr>
              <td>
                <Button
                  class="link"
                  aria-label={`Report ${r.report_id ?? r.id} from ${r.org_name ?? 'an unknown reporter'}`}
                  onClick={async () => {
                    const full = await detail.run(() =>
                      ok(api.GET('/v2/domains/{id}/dmarc/reports/{report_id}', { params: { path: { id: domainId, report_id: r.id } } })),
                    );
                    if (full) setOpen(full);
                  }}
                >
                  {r.org_name ?? r.filename ?? r.id}
                </Button>
              </td>
              <td>{r.period_start ? `${formatDate(r.period_start)} – ${formatDate(r.period_end)}` : '—'}</td>
              <td>{r.type}</td>
              <td>{r.message_count.toLocaleString()}</td>
              <td>{percent(r.pass_rate)}</td>
              <td>
                <Badge value={r.status} />
              </td>
              <td>{formatDate(r.created_at)}</td>
            </tr>
          )}
        />
        {reports.data ? (
          <Pager page={page} hasNext={page * PAGE < reports.data.meta.total} onPage={setPage} loading={reports.loading} />
        ) : null}
      </section>
      <Dialog title="Upload a DMARC report" open={uploading} onClose={() => setUploading(false)}>
        {uploading ? (
          <Upload
            domainId={domainId}
            onDone={(report) => {
              setUploading(false);
              setOpen(report);
              setGeneration(generation + 1);
            }}
          />
        ) : null}
      </Dialog>
      <Dialog title={open ? `Report ${open.report_id ?? open.id}` : 'Report'} open={open !== null} onClose={() => setOpen(null)}>
        {open ? <ReportView report={open} /> : null}
      </Dialog>
    </>
  );
}

export function Dmarc() {
  const domains = useLoad(() => ok(api.GET('/v2/domains', { params: { query: { limit: 100 } as never } })), []);
  const [chosen, setChosen] = useState('');
  const list = domains.data?.data ?? [];
  const domain = list.find((d) => d.id === chosen) ?? list.find((d) => d.dmarc_reports) ?? list[0];
  return (
    <>
      <PageHeader title="DMARC reports">
        {list.length > 0 && domain ? (
          <Select label="Domain" value={domain.id} onChange={setChosen} options={list.map((d): [string, string] => [d.id, d.name])} />
        ) : null}
      </PageHeader>
      {domains.loading ? <Loading /> : null}
      <ErrorBox error={domains.error} />
      {domains.data && list.length === 0 ? (
        <p>
          No domains yet: <Link href="/domains">add one</Link>, then turn on its DMARC reports.
        </p>
      ) : null}
      {domain ? (
        <>
          <p class="muted">
            {domain.dmarc_reports ? (
              <>
                Reports arrive at the address in the domain's DMARC record
                {domain.dmarc_address ? (
                  <>
                    : <code class="record">{domain.dmarc_address}</code>{' '}
                    <CopyButton text={domain.dmarc_address} what="the report address" />
                  </>
                ) : (
                  '.'
                )}{' '}
              </>
            ) : (
              <>
                Collection is off for {domain.name}: turn on "Receive DMARC reports" in{' '}
                <Link href={`/domains/${domain.id}`}>its settings</Link>.{' '}
              </>
            )}
          </p>
          <DomainReports key={domain.id} domainId={domain.id} />
        </>
      ) : null}
    </>
  );
}
