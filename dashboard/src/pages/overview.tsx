// Overview: the workspace's mail activity per day as charts, its credits and sending limits, and
// its complaint and hard-bounce rates against what receivers tolerate (docs/deliverability.md).
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { BarChart } from '../components/Chart';
import { ErrorBox, Facts, Loading, PageHeader, Select } from '../components/ui';
import { useLoad } from '../lib/hooks';
import { Deliverability } from '../components/Deliverability';
import { GettingStarted } from '../components/GettingStarted';

const SERIES = [
  ['sent', 'Sent', '#2457c5'],
  ['delivered', 'Delivered', '#1f7a3a'],
  ['bounced', 'Bounced', '#b3261e'],
  ['complained', 'Complaints', '#8a4b00'],
  ['opened', 'Opens', '#5b3cc4'],
  ['clicked', 'Clicks', '#006d77'],
] as const;

export function Overview() {
  const [days, setDays] = useState('30');
  const stats = useLoad(() => ok(api.GET('/v2/stats/emails', { params: { query: { days: Number(days) } } })), [days]);
  const workspace = useLoad(() => ok(api.GET('/v2/workspace')), []);
  const w = workspace.data;
  return (
    <>
      <PageHeader title="Overview">
        <Select label="Period" value={days} onChange={setDays} options={[['7', 'Last 7 days'], ['30', 'Last 30 days'], ['90', 'Last 90 days']]} />
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
              ['Sent today', `${w.sent_today.toLocaleString()} of ${w.daily_limit.toLocaleString()} per day`],
              ['Sending rate', `${w.send_rate} per second`],
              ['Verified workspace', w.verified ? 'Yes' : 'No: sends only to member addresses'],
            ]}
          />
        ) : null}
      </section>
      <Deliverability />
      <section aria-labelledby="activity-title">
        <h2 id="activity-title">Activity</h2>
        {stats.loading ? <Loading /> : null}
        <ErrorBox error={stats.error} />
        {stats.data ? (
          <div class="charts">
            {SERIES.map(([key, title, color]) => (
              <BarChart title={title} color={color} points={stats.data!.data.map((d) => ({ date: d.date, value: d[key] }))} />
            ))}
          </div>
        ) : null}
      </section>
    </>
  );
}
