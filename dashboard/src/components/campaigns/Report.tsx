// A campaign's report beyond the bars: sent, delivered, bounced, complaints, opens and clicks with
// their rates (complaints and hard bounces against the receivers' thresholds), opens and clicks
// over time (uPlot, loaded only when drawn), and the clicks of each link
// (GET /v2/campaigns/{id}/report and GET /v2/stats/campaigns/{id}).
import { useMemo } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { formatPercent, TimeChart, type ChartSeries } from '../Chart';
import { Gauge, type Thresholds } from '../Deliverability';
import { Button, ErrorBox, Loading, TableScroll } from '../ui';
import { useLoad } from '../../lib/hooks';

const share = (part: number, whole: number) => (whole > 0 ? part / whole : null);
const levelOf = (rate: number | null, t: Thresholds) =>
  rate === null || rate < t.recommended ? 'ok' : rate < t.limit ? 'warning' : 'over_limit';

export function Report({ campaignId, status }: { campaignId: string; status: string }) {
  const figures = useLoad(() => ok(api.GET('/v2/campaigns/{id}/report', { params: { path: { id: campaignId } } })), [campaignId, status]);
  const stats = useLoad(() => ok(api.GET('/v2/stats/campaigns/{id}', { params: { path: { id: campaignId } } })), [campaignId, status]);
  const r = figures.data;
  const s = stats.data;
  const times = useMemo(() => (s ? s.data.map((d) => Date.parse(d.start)) : []), [s]);
  const series = useMemo(
    (): ChartSeries[] =>
      s
        ? [
            { label: 'Opens', color: '#5b3cc4', values: s.data.map((d) => d.opened) },
            { label: 'Clicks', color: '#006d77', values: s.data.map((d) => d.clicked) },
          ]
        : [],
    [s],
  );
  const reload = () => {
    void figures.reload();
    void stats.reload();
  };
  return (
    <section aria-labelledby="campaign-insight-title" class="campaign-insight">
      <div class="toolbar">
        <h2 id="campaign-insight-title">Engagement</h2>
        <Button class="small" onClick={reload} busy={figures.loading || stats.loading}>
          Reload opens and clicks
        </Button>
      </div>
      {(figures.loading && !r) || (stats.loading && !s) ? <Loading /> : null}
      <ErrorBox error={figures.error ?? stats.error} />
      {r && s ? (
        <>
          <TableScroll label="Campaign figures and rates">
            <thead>
              <tr>
                <th scope="col">Figure</th>
                <th scope="col">Count</th>
                <th scope="col">Rate</th>
              </tr>
            </thead>
            <tbody>
              {(
                [
                  ['Sent', r.sent, null, ''],
                  ['Delivered', r.delivered, share(r.delivered, r.sent), 'of sent'],
                  ['Bounced', r.bounced, share(r.bounced, r.sent), 'of sent'],
                  ['Complaints', r.complained, r.complaint_rate, 'of delivered'],
                  ['Opened (unique)', r.unique_loads, share(r.unique_loads, r.delivered), 'of delivered'],
                  ['Clicked (unique)', r.unique_clicks, share(r.unique_clicks, r.delivered), 'of delivered'],
                ] as Array<[string, number, number | null, string]>
              ).map(([label, count, rate, of]) => (
                <tr data-figure={label}>
                  <th scope="row">{label}</th>
                  <td>{count.toLocaleString()}</td>
                  <td>
                    {label === 'Complaints' ? (
                      <Gauge
                        rate={rate}
                        level={levelOf(rate, s.thresholds.complaint_rate)}
                        of={`${r.delivered} delivered`}
                        thresholds={s.thresholds.complaint_rate}
                      />
                    ) : rate === null ? (
                      <span class="muted">—</span>
                    ) : (
                      `${formatPercent(rate)} ${of}`
                    )}
                  </td>
                </tr>
              ))}
              <tr data-figure="Hard bounces">
                <th scope="row">Hard bounces</th>
                <td>{r.hard_bounced.toLocaleString()}</td>
                <td>
                  <Gauge
                    rate={r.hard_bounce_rate}
                    level={levelOf(r.hard_bounce_rate, s.thresholds.hard_bounce_rate)}
                    of={`${r.delivered + r.bounced} delivered or bounced`}
                    thresholds={s.thresholds.hard_bounce_rate}
                  />
                </td>
              </tr>
            </tbody>
          </TableScroll>
          {s.data.length > 0 ? (
            <div class="charts wide">
              <TimeChart
                id="campaign-engagement"
                title="Opens and clicks over time"
                summary={`Opens ${r.loaded.toLocaleString()}, clicks ${r.clicked.toLocaleString()} (every hit), by the ${s.interval} (UTC)`}
                times={times}
                interval={s.interval}
                series={series}
              />
            </div>
          ) : (
            <p class="muted">No opens or clicks yet.</p>
          )}
          <h3>Clicks per link</h3>
          {s.links.length === 0 ? (
            <p class="muted">No link clicked yet.</p>
          ) : (
            <TableScroll label="Clicks per link">
              <thead>
                <tr>
                  <th scope="col">Link</th>
                  <th scope="col">Clicks</th>
                  <th scope="col">Unique clicks</th>
                </tr>
              </thead>
              <tbody>
                {s.links.map((l) => (
                  <tr data-link={l.url}>
                    <td class="wrap">
                      <a href={l.url} target="_blank" rel="noopener noreferrer">
                        {l.url}
                      </a>
                    </td>
                    <td>{l.clicks.toLocaleString()}</td>
                    <td>{l.unique_clicks.toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </TableScroll>
          )}
        </>
      ) : null}
    </section>
  );
}
