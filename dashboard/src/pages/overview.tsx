// Overview: the workspace's mail over a chosen period (the last 24 hours by the hour, or 7, 30 or
// 90 days by the day): volume and rates drawn with uPlot (loaded only here), each rate against
// what receivers tolerate, breakdowns by recipient provider and sending domain; its credits and
// sending limits; and the complaint and hard-bounce rates per sending domain (docs/dashboard.md).
import { useMemo, useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { formatPercent, preloadCharts, TimeChart, type ChartSeries } from '../components/Chart';
import { ErrorBox, Facts, Loading, PageHeader, Select } from '../components/ui';
import { useLoad } from '../lib/hooks';
import { Deliverability, Gauge } from '../components/Deliverability';
import { BreakdownTable } from '../components/Breakdown';
import { GettingStarted } from '../components/GettingStarted';

type Stats = Ok<'/v2/stats/emails', 'get'>;
type Period = '24h' | '7d' | '30d' | '90d';
const PERIODS: Array<[Period, string]> = [
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['90d', 'Last 90 days'],
];

const VOLUME = [
  ['sent', 'Sent', '#2457c5'],
  ['delivered', 'Delivered', '#1f7a3a'],
  ['bounced', 'Bounced', '#b3261e'],
  ['complained', 'Complaints', '#8a4b00'],
  ['opened', 'Opened', '#5b3cc4'],
  ['clicked', 'Clicked', '#006d77'],
] as const;
const ENGAGEMENT = [
  ['delivery_rate', 'Delivery rate', '#1f7a3a'],
  ['open_rate', 'Open rate', '#5b3cc4'],
  ['click_rate', 'Click rate', '#006d77'],
] as const;
const PROBLEMS = [
  ['bounce_rate', 'Bounce rate', '#b3261e'],
  ['hard_bounce_rate', 'Hard-bounce rate', '#7a1712'],
  ['complaint_rate', 'Complaint rate', '#8a4b00'],
] as const;

function RateTiles({ stats }: { stats: Stats }) {
  const t = stats.totals;
  const of = (part: number, whole: number, what: string) => `${part.toLocaleString()} of ${whole.toLocaleString()} ${what}`;
  const tiles: Array<[string, number | null, string, preact.ComponentChildren?]> = [
    ['Delivery rate', t.delivery_rate, of(t.delivered, t.sent, 'sent')],
    ['Bounce rate', t.bounce_rate, of(t.bounced, t.sent, 'sent')],
    [
      'Hard-bounce rate',
      t.hard_bounce_rate,
      of(t.hard_bounced, t.delivered + t.bounced, 'delivered or bounced'),
      <Gauge
        rate={t.hard_bounce_rate}
        level={t.hard_bounce_level}
        of={`${t.delivered + t.bounced} delivered or bounced`}
        thresholds={stats.thresholds.hard_bounce_rate}
      />,
    ],
    [
      'Complaint rate',
      t.complaint_rate,
      of(t.complained, t.delivered, 'delivered'),
      <Gauge
        rate={t.complaint_rate}
        level={t.complaint_level}
        of={`${t.delivered} delivered`}
        thresholds={stats.thresholds.complaint_rate}
      />,
    ],
    ['Open rate', t.open_rate, of(t.opened, t.delivered, 'delivered')],
    ['Click rate', t.click_rate, of(t.clicked, t.delivered, 'delivered')],
  ];
  return (
    <ul class="rate-tiles" aria-label="Rates of the period">
      {tiles.map(([label, rate, detail, gauge]) => (
        <li class="rate-tile" data-rate={label}>
          <span class="rate-label">{label}</span>
          <strong class="rate-value">{rate === null ? '—' : formatPercent(rate)}</strong>
          <span class="muted small-text">{detail}</span>
          {gauge ? <span class="small-text">{gauge}</span> : null}
        </li>
      ))}
    </ul>
  );
}

function series<K extends string>(
  stats: Stats,
  list: ReadonlyArray<readonly [K, string, string]>,
  pick: (row: Stats['data'][number], key: K) => number | null,
): ChartSeries[] {
  return list.map(([key, label, color]) => ({ label, color, values: stats.data.map((row) => pick(row, key)) }));
}

function Activity({ stats, periodText }: { stats: Stats; periodText: string }) {
  const times = useMemo(() => stats.data.map((d) => Date.parse(d.start)), [stats]);
  const volume = useMemo(() => series(stats, VOLUME, (row, key) => row[key]), [stats]);
  const engagement = useMemo(() => series(stats, ENGAGEMENT, (row, key) => row[key]), [stats]);
  const problems = useMemo(() => {
    const { complaint_rate, hard_bounce_rate } = stats.thresholds;
    const line = (label: string, value: number, color: string): ChartSeries => ({
      label,
      color,
      dash: [6, 4],
      values: stats.data.map(() => value),
    });
    return [
      ...series(stats, PROBLEMS, (row, key) => row[key]),
      line(`Complaint limit (${formatPercent(complaint_rate.limit)})`, complaint_rate.limit, '#8a4b00'),
      line(`Hard-bounce limit (${formatPercent(hard_bounce_rate.recommended)} recommended)`, hard_bounce_rate.recommended, '#7a1712'),
    ];
  }, [stats]);
  const t = stats.totals;
  const rate = (r: number | null) => (r === null ? 'no mail' : formatPercent(r));
  return (
    <div class="charts wide">
      <TimeChart
        id="volume"
        title="Volume"
        summary={`${periodText}: ${VOLUME.map(([key, label]) => `${label} ${t[key].toLocaleString()}`).join(', ')}`}
        times={times}
        interval={stats.interval}
        series={volume}
      />
      <TimeChart
        id="engagement"
        title="Delivery, opens and clicks"
        summary={`${periodText}: delivery rate ${rate(t.delivery_rate)}, open rate ${rate(t.open_rate)}, click rate ${rate(t.click_rate)}`}
        times={times}
        interval={stats.interval}
        series={engagement}
        format={formatPercent}
      />
      <TimeChart
        id="problems"
        title="Bounces and complaints"
        summary={`${periodText}: bounce rate ${rate(t.bounce_rate)}, hard-bounce rate ${rate(t.hard_bounce_rate)}, complaint rate ${rate(t.complaint_rate)}; dashed lines are the receivers' thresholds`}
        times={times}
        interval={stats.interval}
        series={problems}
        format={formatPercent}
      />
    </div>
  );
}

export function Overview() {
  preloadCharts();
  const [period, setPeriod] = useState<Period>('30d');
  const stats = useLoad(() => ok(api.GET('/v2/stats/emails', { params: { query: { period } } })), [period]);
  const workspace = useLoad(() => ok(api.GET('/v2/workspace')), []);
  const w = workspace.data;
  const s = stats.data;
  const periodText = PERIODS.find(([p]) => p === period)![1];
  return (
    <>
      <PageHeader title="Overview">
        <Select label="Period" value={period} onChange={(p) => setPeriod(p as Period)} options={PERIODS} />
      </PageHeader>
      <GettingStarted />
      <section aria-labelledby="usage-title" class="card">
        <h2 id="usage-title">Credits and limits</h2>
        {workspace.loading && !w ? <Loading /> : null}
        <ErrorBox error={workspace.error} />
        {w ? (
          <Facts
            items={[
              ['Workspace', w.name],
              ['Plan', w.plan_name],
              ['Credits left', w.credits.toLocaleString()],
              ['Sent today', `${w.sent_today.toLocaleString()} (UTC day; campaigns and automations included)`],
              [
                'Daily limit',
                `${w.daily_limit_used.toLocaleString()} of ${w.daily_limit.toLocaleString()} used (campaign mail is not limited by it)`,
              ],
              ['Sending rate', `${w.send_rate} per second`],
              ['Verified workspace', w.verified ? 'Yes' : 'No: sends only to member addresses'],
            ]}
          />
        ) : null}
      </section>
      <section aria-labelledby="activity-title">
        <h2 id="activity-title">Your mail, {periodText.toLowerCase()}</h2>
        <p class="muted">
          Every email counts once per recipient, whatever sent it (API, SMTP, campaigns, automations), in the{' '}
          {s?.interval === 'hour' ? 'hour' : 'day'} it was created (UTC); what became of it since counts there too.
        </p>
        {stats.loading && !s ? <Loading /> : null}
        <ErrorBox error={stats.error} />
        {s ? (
          <>
            <RateTiles stats={s} />
            <Activity stats={s} periodText={periodText} />
            <BreakdownTable
              id="providers"
              title="By recipient provider"
              label="Provider"
              rows={s.providers.map((p) => ({ ...p, key: p.provider }))}
            />
            <BreakdownTable
              id="sending-domains"
              title="By sending domain"
              label="Sending domain"
              rows={s.sending_domains.map((d) => ({ ...d, key: d.domain_id, href: `/domains/${d.domain_id}` }))}
              empty="No mail from a sending domain in this period."
            />
          </>
        ) : null}
      </section>
      <Deliverability />
    </>
  );
}
