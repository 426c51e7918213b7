// Campaigns: the list with a status filter and search; composing a draft (sender, subject,
// audiences included and excluded, HTML and text with a live preview); one campaign's settings
// (editable while the API allows), sending now or scheduling, pause/resume/cancel/archive/delete
// as its status allows, and its report drawn as bars, refreshed while it sends.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Bars, type Bar } from '../components/campaigns/Bars';
import { DuplicateButton, SentContent, TestSendDialog } from '../components/campaigns/Writing';
import { useEditor } from '../components/editor/load';
import { Tabs } from '../components/Tabs';
import { DeleteButton } from '../components/DeleteButton';
import { FilterSelect } from '../components/FilterSelect';
import { DetailStatus } from '../components/DetailStatus';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { Badge, Button, Dialog, ErrorBox, Facts, Field, Loading, PageHeader, Progress, SearchBox, Select } from '../components/ui';
import { formatDate, useAction, useLoad, usePolling, type Loaded } from '../lib/hooks';
import { present, useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import type { PageProps } from './index';
import { Report } from '../components/campaigns/Report';

type Campaign = Ok<'/v2/campaigns/{id}', 'get'>;
type Report = Ok<'/v2/campaigns/{id}/report', 'get'>;
type Audiences = Ok<'/v2/audiences', 'get'>;
type Recipient = { audience_id: string; exclude: boolean };

const STATUS_OPTIONS: Array<[string, string]> = [
  ['', 'All but archived'],
  ['draft', 'Draft'],
  ['scheduled', 'Scheduled'],
  ['sending', 'Sending'],
  ['paused', 'Paused'],
  ['sent', 'Sent'],
  ['canceled', 'Canceled'],
  ['archived', 'Archived'],
  ['all', 'All'],
];
const EDITABLE = ['draft', 'scheduled', 'paused'];
/** While the campaign is in one of these, its report is reloaded every couple of seconds. */
const LIVE = ['queued', 'sending', 'paused'];

const input = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);

function useAudiences(): Loaded<Audiences> {
  return useLoad(() => ok(api.GET('/v2/audiences', { params: { query: { limit: 100, order: 'name', direction: 'asc' } as never } })), []);
}

export function Campaigns() {
  const list = useListPage({ status: '', order: '', direction: '' }, ({ direction, ...query }) =>
    ok(api.GET('/v2/campaigns', { params: { query: present({ ...query, direction: query.order ? direction || 'asc' : '' }) as never } })),
  );
  const campaigns = list.loaded;
  return (
    <>
      <PageHeader title="Campaigns">
        <Button kind="primary" onClick={() => navigate('/campaigns/new')}>
          New campaign
        </Button>
      </PageHeader>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search name or subject" />
        <FilterSelect list={list} name="status" label="Status" options={STATUS_OPTIONS} />
        <FilterSelect
          list={list}
          name="order"
          label="Sort by"
          options={[
            ['', 'Newest first'],
            ['name', 'Name'],
            ['status', 'Status'],
            ['sent_at', 'Sent'],
          ]}
        />
      </div>
      {campaigns.data ? <p class="muted">{campaigns.data.total_records.toLocaleString()} campaigns</p> : null}
      <ListTable
        label="Campaign list"
        {...list.table}
        items={(data) => data.data}
        columns={['Name', 'Status', 'Subject', 'Scheduled', 'Sent', 'Created']}
        empty={{
          title: 'No campaigns.',
          text: 'A campaign is one email sent to an audience, now or at a set time.',
          action: 'Write your first campaign',
          href: '/campaigns/new',
        }}
        hasNext={nextPageUrl}
        row={(c) => (
          <tr>
            <td>
              <Link href={`/campaigns/${c.id}`}>{c.name}</Link>
            </td>
            <td>
              <Badge value={c.status} />
            </td>
            <td class="wrap">{c.subject || '—'}</td>
            <td>{formatDate(c.scheduled_at)}</td>
            <td>{formatDate(c.sent_at)}</td>
            <td>{formatDate(c.created_at)}</td>
          </tr>
        )}
      />
    </>
  );
}

/** Which audiences are included and which excluded: one choice per audience. */
function RecipientPicker({
  audiences,
  value,
  onChange,
}: {
  audiences: Loaded<Audiences>;
  value: Recipient[];
  onChange: (next: Recipient[]) => void;
}) {
  const choice = (id: string) => {
    const found = value.find((r) => r.audience_id === id);
    return found ? (found.exclude ? 'exclude' : 'include') : '';
  };
  const set = (id: string, what: string) => {
    const rest = value.filter((r) => r.audience_id !== id);
    onChange(what === '' ? rest : [...rest, { audience_id: id, exclude: what === 'exclude' }]);
  };
  const items = audiences.data?.data ?? [];
  return (
    <fieldset class="group">
      <legend>Audiences</legend>
      {audiences.loading ? <Loading label="Loading audiences…" /> : null}
      <ErrorBox error={audiences.error} />
      {audiences.data && items.length === 0 ? (
        <p class="muted">
          No audiences yet: <Link href="/audiences">create one</Link> first.
        </p>
      ) : null}
      {items.length > 0 ? (
        <div class="recipient-picker">
          {items.map((a) => (
            <div class="picker-row">
              <span>
                {a.name} <span class="muted">({a.subscribers_count.toLocaleString()} subscribers)</span>
              </span>
              <label>
                <span class="visually-hidden">Audience {a.name}</span>
                <select value={choice(a.id)} onChange={(e) => set(a.id, (e.target as HTMLSelectElement).value)}>
                  <option value="">Not used</option>
                  <option value="include">Include</option>
                  <option value="exclude">Exclude</option>
                </select>
              </label>
            </div>
          ))}
        </div>
      ) : null}
      <p class="hint">Contacts in several included audiences get one copy. Unsubscribed and suppressed addresses are skipped.</p>
    </fieldset>
  );
}

/** A new draft: its settings and its content (the API takes the content at creation only). */
export function CampaignCompose() {
  const audiences = useAudiences();
  const [name, setName] = useState('');
  const [fromName, setFromName] = useState('');
  const [fromEmail, setFromEmail] = useState('');
  const [replyTo, setReplyTo] = useState('');
  const [subject, setSubject] = useState('');
  const [previewText, setPreviewText] = useState('');
  const [recipients, setRecipients] = useState<Recipient[]>([]);
  const editor = useEditor();
  const save = useAction();
  return (
    <>
      <PageHeader title="New campaign" />
      <p>
        <Link href="/campaigns">All campaigns</Link>
      </p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          // As in SettingsForm: the fields as shown, not as last rendered.
          const form = new FormData(e.currentTarget);
          const field = (key: string) => String(form.get(key) ?? '');
          const created = await save.run(async () => {
            const content = await editor.collect();
            const body = {
              name: field('name'),
              from_name: field('from_name'),
              from_email: field('from_email'),
              subject: field('subject'),
              preview_text: field('preview_text') || null,
              ...content,
              ...(field('reply_to') ? { reply_to: field('reply_to') } : {}),
            };
            const made = await ok(api.POST('/v2/campaigns', { body }));
            if (recipients.length > 0)
              await ok(api.POST('/v2/campaigns/{id}', { params: { path: { id: made.id } }, body: { recipients } }));
            return made;
          });
          if (created) navigate(`/campaigns/${created.id}`);
        }}
      >
        <div class="editor-grid">
          <div>
            <Field label="Campaign name" hint="Not shown to recipients">
              <input name="name" required value={name} onInput={input(setName)} />
            </Field>
            <Field label="From name">
              <input name="from_name" value={fromName} onInput={input(setFromName)} />
            </Field>
            <Field label="From address" hint="On a verified domain">
              <input name="from_email" type="email" value={fromEmail} onInput={input(setFromEmail)} />
            </Field>
            <Field label="Reply-to address" hint="Empty: replies go to the from address">
              <input name="reply_to" type="email" value={replyTo} onInput={input(setReplyTo)} />
            </Field>
            <Field label="Subject" hint="Merge tags such as {{first_name}} allowed">
              <input name="subject" value={subject} onInput={input(setSubject)} />
            </Field>
            <Field label="Preview text">
              <input name="preview_text" value={previewText} onInput={input(setPreviewText)} />
            </Field>
          </div>
          <div>
            <RecipientPicker audiences={audiences} value={recipients} onChange={setRecipients} />
          </div>
        </div>
        <h2>Content</h2>
        {editor.render({ initial: null, subject, previewText })}
        <ErrorBox error={save.error} />
        <p>
          <Button type="submit" kind="primary" busy={save.busy}>
            Create draft
          </Button>
        </p>
      </form>
    </>
  );
}

/** The settings the API lets change while a campaign is a draft, scheduled or paused. */
/**
 * `save` is the page's: it orders the answer against the page's other refetches (see
 * CampaignDetail). The fields keep what was typed when the campaign shown changes: this form is
 * keyed by the campaign's id only, so a refetch or a status change never remounts it.
 */
function SettingsForm({
  campaign,
  save: saveCampaign,
}: {
  campaign: Campaign;
  save: (call: () => Promise<Campaign>) => Promise<Campaign>;
}) {
  const audiences = useAudiences();
  const [name, setName] = useState(campaign.name);
  const [fromName, setFromName] = useState(campaign.from_name);
  const [fromEmail, setFromEmail] = useState(campaign.from_email);
  const [replyTo, setReplyTo] = useState(campaign.reply_to);
  const [subject, setSubject] = useState(campaign.subject);
  const [previewText, setPreviewText] = useState(campaign.preview_text ?? '');
  const [recipients, setRecipients] = useState<Recipient[]>(campaign.recipients);
  const save = useAction();
  const [saved, setSaved] = useState(false);
  const editable = EDITABLE.includes(campaign.status);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setSaved(false);
        // What the fields show is what is saved: read from the form itself, so a submit that
        // comes before the last keystroke's re-render still sends it.
        const form = new FormData(e.currentTarget);
        const field = (key: string) => String(form.get(key) ?? '');
        const body = editable
          ? {
              name: field('name'),
              from_name: field('from_name'),
              from_email: field('from_email'),
              reply_to: field('reply_to'),
              subject: field('subject'),
              preview_text: field('preview_text') || null,
              ...(recipients.length > 0 || campaign.recipients.length > 0 ? { recipients } : {}),
            }
          : { name: field('name') };
        const updated = await save.run(() =>
          saveCampaign(() => ok(api.POST('/v2/campaigns/{id}', { params: { path: { id: campaign.id } }, body }))),
        );
        if (updated) setSaved(true);
      }}
    >
      {!editable ? <p class="notice">A {campaign.status} campaign can only be renamed.</p> : null}
      <div class="editor-grid">
        <div>
          <Field label="Campaign name">
            <input name="name" required value={name} onInput={input(setName)} />
          </Field>
          <Field label="From name">
            <input name="from_name" disabled={!editable} value={fromName} onInput={input(setFromName)} />
          </Field>
          <Field label="From address" hint="On a verified domain">
            <input name="from_email" type="email" disabled={!editable} value={fromEmail} onInput={input(setFromEmail)} />
          </Field>
          <Field label="Reply-to address">
            <input name="reply_to" type="email" disabled={!editable} value={replyTo} onInput={input(setReplyTo)} />
          </Field>
          <Field label="Subject">
            <input name="subject" disabled={!editable} value={subject} onInput={input(setSubject)} />
          </Field>
          <Field label="Preview text">
            <input name="preview_text" disabled={!editable} value={previewText} onInput={input(setPreviewText)} />
          </Field>
        </div>
        <div>{editable ? <RecipientPicker audiences={audiences} value={recipients} onChange={setRecipients} /> : null}</div>
      </div>
      <p class="muted">
        The content ({campaign.content_type}) is given when the campaign is created; the API does not change it afterwards.
      </p>
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy}>
        Save settings
      </Button>
      {saved ? <span role="status"> Saved.</span> : null}
    </form>
  );
}

/** Send now, or schedule for later (ISO 8601 or English such as "tomorrow at 9am", UTC). */
function SendDialog({
  campaign,
  open,
  onClose,
  track,
  onSent,
}: {
  campaign: Campaign;
  open: boolean;
  onClose: () => void;
  track: (call: () => Promise<Campaign>) => Promise<Campaign>;
  onSent: () => void;
}) {
  const [when, setWhen] = useState<'now' | 'later'>('now');
  const [at, setAt] = useState('');
  const send = useAction();
  return (
    <Dialog title={`Send ${campaign.name}`} open={open} onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const body = when === 'later' ? { scheduled_at: at } : {};
          const sent = await send.run(() =>
            track(() => ok(api.POST('/v2/campaigns/{id}/send', { params: { path: { id: campaign.id } }, body }))),
          );
          if (sent) onSent();
        }}
      >
        <Select
          label="When"
          value={when}
          onChange={(v) => setWhen(v as 'now' | 'later')}
          options={[
            ['now', 'Now'],
            ['later', 'At a later time'],
          ]}
        />
        {when === 'later' ? (
          <Field label="Send at" hint='UTC: 2026-12-01T09:00:00Z or "tomorrow at 9am"'>
            <input name="scheduled_at" required value={at} onInput={input(setAt)} />
          </Field>
        ) : (
          <p>The campaign goes to every subscribed contact of its included audiences, 2 credits per email.</p>
        )}
        <ErrorBox error={send.error} />
        <p>
          <Button type="submit" kind="primary" busy={send.busy}>
            {when === 'later' ? 'Schedule' : 'Send now'}
          </Button>
        </p>
      </form>
    </Dialog>
  );
}

/**
 * The report as bars against the recipients, reloaded every 2 s while the campaign sends. It
 * stays mounted when the campaign's status changes (it loads again, the bars staying on screen
 * meanwhile), and it polls one request at a time.
 */
function ReportView({ campaign, onStatus }: { campaign: Campaign; onStatus: (status: Campaign['status']) => void }) {
  const report = useLoad(
    () => ok(api.GET('/v2/campaigns/{id}/report', { params: { path: { id: campaign.id } } })),
    [campaign.id, campaign.status],
  );
  const r = report.data;
  const live =
    LIVE.includes(campaign.status) ||
    LIVE.includes(r?.status ?? '') ||
    (r !== undefined && r.status === 'sent' && r.delivered + r.bounced + r.failed < r.sent);
  usePolling(report.reload, 2000, live);
  useEffect(() => {
    if (r && r.status !== campaign.status) onStatus(r.status);
  }, [r?.status]);
  const bars = useMemo((): Bar[] => {
    if (!r) return [];
    return [
      { label: 'Sent', value: r.sent, color: '#2457c5' },
      { label: 'Delivered', value: r.delivered, color: '#1f7a3a' },
      { label: 'Opened', value: r.unique_loads, color: '#5b3cc4', note: r.loaded > r.unique_loads ? `· ${r.loaded} opens` : undefined },
      {
        label: 'Clicked',
        value: r.unique_clicks,
        color: '#006d77',
        note: r.clicked > r.unique_clicks ? `· ${r.clicked} clicks` : undefined,
      },
      { label: 'Bounced', value: r.bounced, color: '#b3261e' },
      { label: 'Failed', value: r.failed, color: '#7a1712' },
      { label: 'Complained', value: r.complained, color: '#8a4b00' },
      { label: 'Unsubscribed', value: r.unsubscribed, color: '#4a5568' },
    ];
  }, [r]);
  return (
    <section aria-labelledby="report-title">
      <div class="toolbar">
        <h2 id="report-title">Report</h2>
        <Button onClick={() => void report.reload()} busy={report.loading && !live}>
          Refresh
        </Button>
        {live ? <span class="muted">Updating every 2 seconds</span> : null}
      </div>
      {report.loading && !r ? <Loading /> : null}
      <ErrorBox error={report.error} />
      {r ? (
        <>
          {r.recipients === 0 ? (
            <p class="muted">
              {campaign.status === 'scheduled'
                ? `Sends ${formatDate(campaign.scheduled_at)}.`
                : 'The recipients are counted when sending starts.'}
            </p>
          ) : (
            <Progress
              label="Handed to delivery"
              value={(r.recipients - r.pending) / Math.max(1, r.recipients)}
              text={`${(r.recipients - r.pending).toLocaleString()} of ${r.recipients.toLocaleString()} recipients${r.pending ? `, ${r.pending.toLocaleString()} waiting` : ''}`}
            />
          )}
          <Bars id="campaign-report" title={`Of ${r.recipients.toLocaleString()} recipients`} total={r.recipients} bars={bars} />
          <Facts
            items={[
              ['Recipients', r.recipients.toLocaleString()],
              ['Waiting', r.pending.toLocaleString()],
              ['Skipped', r.skipped.toLocaleString()],
              ['Canceled', r.canceled.toLocaleString()],
            ]}
          />
        </>
      ) : null}
    </section>
  );
}

/**
 * New content for a draft, in the editor, opened on what the draft has (GET …/content). The API
 * takes a campaign's HTML and text at creation only, so saving makes a new draft with the content
 * and every setting of this one, then deletes this one (the page moves to the new draft).
 */
function ReplaceContent({ campaign }: { campaign: Campaign }) {
  const stored = useLoad(() => ok(api.GET('/v2/campaigns/{id}/content', { params: { path: { id: campaign.id } } })), [campaign.id]);
  const editor = useEditor();
  const save = useAction();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const made = await save.run(async () => {
          const c = campaign;
          const content = await editor.collect();
          const body = {
            name: c.name,
            from_name: c.from_name,
            from_email: c.from_email,
            subject: c.subject,
            preview_text: c.preview_text,
            ...content,
            ...(c.reply_to ? { reply_to: c.reply_to } : {}),
          };
          const next = await ok(api.POST('/v2/campaigns', { body }));
          if (c.recipients.length > 0)
            await ok(api.POST('/v2/campaigns/{id}', { params: { path: { id: next.id } }, body: { recipients: c.recipients } }));
          await ok(api.DELETE('/v2/campaigns/{id}', { params: { path: { id: c.id } } }));
          return next;
        });
        if (made) openOnContent(made.id, true);
      }}
    >
      <p class="notice">
        A campaign keeps the content it was created with: saving makes a new draft with this content and this draft's settings and
        audiences, and deletes this draft.
      </p>
      {stored.loading ? <Loading label="Loading the content…" /> : null}
      <ErrorBox error={stored.error} />
      {stored.data ? editor.render({ initial: stored.data, subject: campaign.subject, previewText: campaign.preview_text ?? '' }) : null}
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy}>
        Save new content
      </Button>
    </form>
  );
}

/** The campaign page to open next on its Content tab (a duplicate, a draft with new content). */
let contentFirst: string | null = null;
function openOnContent(id: string, replace = false) {
  contentFirst = id;
  navigate(`/campaigns/${id}`, replace);
}

const TABS = [
  ['report', 'Report'],
  ['settings', 'Settings'],
  ['content', 'Content'],
] as const;
type Tab = (typeof TABS)[number][0];

export function CampaignDetail({ params }: PageProps) {
  const loaded = useLoad(() => ok(api.GET('/v2/campaigns/{id}', { params: { path: { id: params.id } } })), [params.id]);
  const [current, setCurrent] = useState<Campaign | null>(null);
  const c = current ?? loaded.data;
  const [tab, setTab] = useState<Tab | null>(null);
  const [sending, setSending] = useState(false);
  const action = useAction();
  // Until a tab is chosen, the one the campaign's first load suggests: a later change of status
  // (a refetch while sending) never swaps the panel, and the form in it, from under the user.
  const first = loaded.data;
  const [openContent] = useState(() => contentFirst === params.id);
  const shownTab: Tab =
    tab ?? (openContent ? 'content' : first && (first.sent_at || !['draft', 'scheduled'].includes(first.status)) ? 'report' : 'settings');
  const [testing, setTesting] = useState(false);
  const path = c ? { params: { path: { id: c.id } } } : null;
  // Every call that answers with the campaign (actions, saves, refetches when the report's
  // status moves on) takes a ticket when it starts; an answer is shown only if no later call's
  // answer has been, so a slow refetch never puts back an older state over a newer one.
  const tickets = useRef({ issued: 0, shown: 0 });
  const track = async (call: () => Promise<Campaign>): Promise<Campaign> => {
    const ticket = ++tickets.current.issued;
    const next = await call();
    if (ticket > tickets.current.shown) {
      tickets.current.shown = ticket;
      setCurrent(next);
    }
    return next;
  };
  const act = (call: () => Promise<Campaign>) => action.run(() => track(call));
  const tabs = TABS;
  const status = c?.status;
  return (
    <>
      <PageHeader title={c ? `Campaign: ${c.name}` : 'Campaign'}>
        {c && path ? (
          <>
            {status === 'draft' || status === 'scheduled' ? (
              <Button kind="primary" busy={action.busy} onClick={() => setSending(true)}>
                {status === 'scheduled' ? 'Send or reschedule' : 'Send or schedule'}
              </Button>
            ) : null}
            {status === 'queued' || status === 'sending' ? (
              <Button busy={action.busy} onClick={() => act(() => ok(api.POST('/v2/campaigns/{id}/pause', path)))}>
                Pause
              </Button>
            ) : null}
            {status === 'paused' ? (
              <Button kind="primary" busy={action.busy} onClick={() => act(() => ok(api.POST('/v2/campaigns/{id}/resume', path)))}>
                Resume
              </Button>
            ) : null}
            {status === 'draft' || status === 'queued' || status === 'sending' || status === 'paused' ? (
              <Button
                busy={action.busy}
                onClick={() => {
                  if (confirm(`Cancel ${c.name}? Recipients not sent to yet are dropped.`))
                    void act(() => ok(api.POST('/v2/campaigns/{id}/cancel', path)));
                }}
              >
                Cancel campaign
              </Button>
            ) : null}
            {status === 'draft' || status === 'sent' || status === 'canceled' ? (
              <Button busy={action.busy} onClick={() => act(() => ok(api.POST('/v2/campaigns/{id}/archive', path)))}>
                Archive
              </Button>
            ) : null}
            <Button onClick={() => setTesting(true)}>Send a test</Button>
            <DuplicateButton campaign={c} onDuplicated={(id) => openOnContent(id)} />
            {!c.sent_at && status !== 'sending' && status !== 'sent' ? (
              <DeleteButton
                action={action}
                question={`Delete ${c.name}? This cannot be undone.`}
                remove={() => ok(api.DELETE('/v2/campaigns/{id}', path))}
                done="/campaigns"
              />
            ) : null}
          </>
        ) : null}
      </PageHeader>
      <DetailStatus back="/campaigns" backText="All campaigns" loading={loaded.loading && !c} error={loaded.error ?? action.error} />
      {c ? (
        <>
          <Facts
            items={[
              ['Status', <Badge value={c.status} />],
              ...(c.status_reason
                ? ([
                    ['Why', c.status_reason === 'insufficient_credits' ? 'Waiting for credits (resumes by itself)' : c.status_reason],
                  ] as Array<[string, string]>)
                : []),
              ['From', c.from_email ? `${c.from_name ? `${c.from_name} ` : ''}<${c.from_email}>` : '—'],
              ['Subject', c.subject || '—'],
              [
                'Audiences',
                `${c.recipients.filter((r) => !r.exclude).length} included, ${c.recipients.filter((r) => r.exclude).length} excluded`,
              ],
              ['Scheduled', formatDate(c.scheduled_at)],
              ['Sending started', formatDate(c.sent_at)],
            ]}
          />
          <Tabs label="Campaign" tabs={tabs} selected={shownTab} onSelect={setTab} panelId="campaign-panel" style="margin-top: 1rem">
            {shownTab === 'report' ? (
              <ReportView
                key={c.id}
                campaign={c}
                onStatus={() => {
                  track(() => ok(api.GET('/v2/campaigns/{id}', { params: { path: { id: c.id } } }))).catch(() => undefined);
                }}
              />
            ) : shownTab === 'content' ? (
              c.status === 'draft' ? (
                <ReplaceContent key={c.id} campaign={c} />
              ) : (
                <SentContent key={c.id} campaign={c} />
              )
            ) : (
              <SettingsForm key={c.id} campaign={c} save={track} />
            )}
            {shownTab === 'report' ? <Report campaignId={c.id} status={c.status} /> : null}
          </Tabs>
          <TestSendDialog campaign={c} open={testing} onClose={() => setTesting(false)} />
          <SendDialog
            campaign={c}
            open={sending}
            onClose={() => setSending(false)}
            track={track}
            onSent={() => {
              setSending(false);
              setTab('report');
            }}
          />
        </>
      ) : null}
    </>
  );
}
