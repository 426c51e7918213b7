// Domains: the list with each one's status at a glance; one domain's DNS records (each with a
// copy button and its check result), verify now, and its tracking and inbound settings.
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Badge, Button, CopyButton, ErrorBox, Facts, Field, Loading, PageHeader, SearchBox, TableScroll } from '../components/ui';
import { DeleteButton } from '../components/DeleteButton';
import { DIRECTIONS, FilterSelect } from '../components/FilterSelect';
import { DetailStatus } from '../components/DetailStatus';
import { FormDialog } from '../components/FormDialog';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction, useLoad } from '../lib/hooks';
import { useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import type { PageProps } from './index';
import { Warmup } from '../components/Warmup';
import { TestEmail } from '../components/TestEmail';
import { LocalRecordWarning } from '../components/ServerWarnings';

type Domain = Ok<'/v2/domains/{id}', 'get'>;

const plural = (n: number, one: string, many: string) => `${n.toLocaleString()} ${n === 1 ? one : many}`;
/** "1 domain (no limit)", "2 of 5 domains", "1 of 1 domain". */
export function domainCount(count: number, limit: number | null): string {
  return limit === null
    ? `${plural(count, 'domain', 'domains')} (no limit)`
    : `${count.toLocaleString()} of ${plural(limit, 'domain', 'domains')}`;
}

export function Domains() {
  const list = useListPage({ order: 'created_at', direction: 'desc' }, (query) =>
    ok(api.GET('/v2/domains', { params: { query: query as never } })),
  );
  const domains = list.loaded;
  const [adding, setAdding] = useState(false);
  const [name, setName] = useState('');
  const add = useAction();
  return (
    <>
      <PageHeader title="Domains">
        <Button kind="primary" onClick={() => setAdding(true)}>
          Add domain
        </Button>
      </PageHeader>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search domains" />
        <FilterSelect
          list={list}
          name="order"
          label="Sort by"
          options={[
            ['created_at', 'Added'],
            ['name', 'Name'],
          ]}
        />
        <FilterSelect list={list} name="direction" label="Order" options={DIRECTIONS} />
      </div>
      {domains.data ? (
        <p class="muted">
          {domainCount(domains.data.domain_count, domains.data.domain_limit)} on the {domains.data.plan_name} plan
        </p>
      ) : null}
      <ListTable
        label="Domains"
        {...list.table}
        items={(data) => data.data}
        columns={['Domain', 'Status', 'SPF', 'DKIM', 'Return path', 'Checked']}
        empty={{
          title: 'No domains yet.',
          text: 'A domain is what your mail is sent from: add one, publish its DNS records and verify it.',
          action: 'Add your first domain',
          onAction: () => setAdding(true),
        }}
        hasNext={nextPageUrl}
        row={(d) => (
          <tr>
            <td>
              <Link href={`/domains/${d.id}`}>{d.name}</Link>
            </td>
            <td>
              <Badge value={d.verification_status} />
            </td>
            <td>
              <Badge value={d.spf_status} />
            </td>
            <td>
              <Badge value={d.dkim_status} />
            </td>
            <td>
              <Badge value={d.return_path_status} />
            </td>
            <td>{formatDate(d.dns_checked_at)}</td>
          </tr>
        )}
      />
      <FormDialog
        title="Add a domain"
        open={adding}
        onClose={() => setAdding(false)}
        action={add}
        submit="Add domain"
        onSubmit={async () => {
          const created = await add.run(() => ok(api.POST('/v2/domains', { body: { name } })));
          if (created) {
            setAdding(false);
            navigate(`/domains/${created.id}`);
          }
        }}
      >
        <Field label="Domain name" hint="The domain you send from, such as example.com">
          <input name="domain" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
      </FormDialog>
    </>
  );
}

function DnsRecords({ domain }: { domain: Pick<Domain, 'dns_records'> }) {
  return (
    <TableScroll label="DNS records">
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Name</th>
          <th scope="col">Value</th>
          <th scope="col">Check</th>
        </tr>
      </thead>
      <tbody>
        {domain.dns_records.map((r, i) => (
          <tr>
            <td>
              {r.type}
              {r.priority !== null ? ` (priority ${r.priority})` : ''}
              {r.required ? '' : <span class="muted"> optional</span>}
            </td>
            <td>
              <code class="record">{r.name}</code> <CopyButton text={r.name} what={`name of record ${i + 1} (${r.type})`} />
            </td>
            <td>
              <code class="record wrap">{r.value}</code> <CopyButton text={r.value} what={`value of record ${i + 1} (${r.type})`} />
              <LocalRecordWarning value={r.value} />
            </td>
            <td>
              <Badge value={r.status} />
              {r.error ? <div class="small-text">{r.error}</div> : null}
            </td>
          </tr>
        ))}
      </tbody>
    </TableScroll>
  );
}

function DomainSettings({ domain, onSaved }: { domain: Domain; onSaved: () => void }) {
  const [trackingKey, setTrackingKey] = useState(domain.tracking_key ?? '');
  const [inboundKey, setInboundKey] = useState(domain.inbound_key ?? '');
  const [trackLoads, setTrackLoads] = useState(Boolean(domain.track_loads));
  const [trackClicks, setTrackClicks] = useState(Boolean(domain.track_clicks));
  const [dmarc, setDmarc] = useState(Boolean(domain.dmarc_reports));
  const save = useAction();
  const [saved, setSaved] = useState(false);
  return (
    <form
      class="card"
      onSubmit={async (e) => {
        e.preventDefault();
        setSaved(false);
        const body = {
          tracking_key: trackingKey || null,
          inbound_key: inboundKey || null,
          track_loads: trackLoads,
          track_clicks: trackClicks,
          dmarc_reports: dmarc,
        };
        const updated = await save.run(() => ok(api.PATCH('/v2/domains/{id}', { params: { path: { id: domain.id } }, body })));
        if (updated) {
          setSaved(true);
          onSaved();
        }
      }}
    >
      <h2>Tracking and inbound</h2>
      <Field label="Tracking subdomain" hint="e.g. track: links and opens go through track.your-domain">
        <input name="tracking_key" value={trackingKey} onInput={(e) => setTrackingKey((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="Inbound subdomain" hint="e.g. inbound: mail to it arrives as inbound emails">
        <input name="inbound_key" value={inboundKey} onInput={(e) => setInboundKey((e.target as HTMLInputElement).value)} />
      </Field>
      <label class="check">
        <input type="checkbox" checked={trackLoads} onChange={(e) => setTrackLoads((e.target as HTMLInputElement).checked)} /> Track opens
      </label>
      <label class="check">
        <input type="checkbox" checked={trackClicks} onChange={(e) => setTrackClicks((e.target as HTMLInputElement).checked)} /> Track
        clicks
      </label>
      <label class="check">
        <input type="checkbox" checked={dmarc} onChange={(e) => setDmarc((e.target as HTMLInputElement).checked)} /> Receive DMARC reports
      </label>
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy}>
        Save settings
      </Button>
      {saved ? <span role="status"> Saved.</span> : null}
    </form>
  );
}

export function DomainDetail({ params }: PageProps) {
  const domain = useLoad(() => ok(api.GET('/v2/domains/{id}', { params: { path: { id: params.id } } })), [params.id]);
  const verify = useAction();
  const remove = useAction();
  const d = domain.data;
  return (
    <>
      <PageHeader title={d ? d.name : 'Domain'}>
        {d ? (
          <>
            <Button
              kind="primary"
              busy={verify.busy}
              onClick={async () => {
                const checked = await verify.run(() => ok(api.POST('/v2/domains/{id}/verify', { params: { path: { id: d.id } } })));
                if (checked) await domain.reload();
              }}
            >
              Verify now
            </Button>
            <DeleteButton
              action={remove}
              question={`Delete ${d.name}?`}
              remove={() => ok(api.DELETE('/v2/domains/{id}', { params: { path: { id: d.id } } }))}
              done="/domains"
            />
          </>
        ) : null}
      </PageHeader>
      <DetailStatus back="/domains" backText="All domains" loading={domain.loading} error={domain.error ?? verify.error ?? remove.error} />
      {verify.busy ? <Loading label="Checking DNS…" /> : null}
      {d ? (
        <>
          <section class="card" aria-labelledby="status-title">
            <h2 id="status-title">Status</h2>
            <Facts
              items={[
                ['Verification', <Badge value={d.verification_status} />],
                ['SPF', <Badge value={d.spf_status} />],
                ['DKIM', <Badge value={d.dkim_status} />],
                ['Return path', <Badge value={d.return_path_status} />],
                ['MX', <Badge value={d.mx_status} />],
                ['DMARC', <Badge value={d.dmarc_status} />],
                ['Verified', formatDate(d.verified_at)],
                ['Last DNS check', formatDate(d.dns_checked_at)],
              ]}
            />
          </section>
          <section>
            <h2 id="records-title">DNS records</h2>
            <p class="muted">Publish these at your DNS host, then verify.</p>
            <DnsRecords domain={d} />
          </section>
          <TestEmail domain={d} />
          <DomainSettings key={d.id} domain={d} onSaved={() => void domain.reload()} />
          <Warmup domain={d.name} />
        </>
      ) : null}
    </>
  );
}
