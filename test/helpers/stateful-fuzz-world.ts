// What the stateful fuzzer knows of the server it attacks: the real ids of every kind of
// resource it made or saw (live, and deleted ones to use again), the tokens of the public pages,
// the links found in the mail the server sent, and the credentials it signs requests with (two
// API keys, one per scope, and two dashboard sessions, an admin's and a member's). Built by
// creating every kind of resource with valid bodies, and kept up as the fuzz runs: ids are
// learnt from every answer, deletions noted, and kinds that run low are made again.
import type { FuzzTarget } from './stateful-fuzz-target.ts';

/** An id as the API makes them: a short prefix and a KSUID. */
const ID = /^[a-z]{1,8}_[A-Za-z0-9]{27}$/;

export interface Session {
  cookie: string;
  csrf: string;
  userId: string;
  email: string;
  password: string;
}

export interface Credentials {
  fullKey: string;
  sendingKey: string;
  admin: Session;
  member: Session;
}

export class World {
  /** Live ids per kind: the literal path segment before the parameter (`domains`, `subscribers`, `runs`…). */
  readonly live = new Map<string, string[]>();
  readonly deleted = new Map<string, string[]>();
  /** Ids the fuzzer must not delete or change: the keys, users and domain it works with. */
  readonly protectedIds = new Set<string>();
  /** Id prefix → kind, learnt from the answers of collections. */
  readonly prefixes = new Map<string, string>();
  /** Public tokens and links: `audiences:token`, `forms:token`, `invitations:token`, `embed`, `confirm`, `leave`, `unsubscribe`, `open`, `click`. */
  readonly tokens = new Map<string, string[]>();
  readonly extraKeys: string[] = [];
  credentials!: Credentials;
  sendingDomain = 'fuzz.test';

  readonly target: FuzzTarget;

  constructor(target: FuzzTarget) {
    this.target = target;
  }

  add(kind: string, id: string): void {
    if (this.protectedIds.has(id)) return;
    const list = this.live.get(kind) ?? [];
    if (list.includes(id) || (this.deleted.get(kind) ?? []).includes(id)) return;
    list.push(id);
    // Bounded: the newest ids, so a long run keeps using what exists now.
    if (list.length > 60) list.splice(0, list.length - 60);
    this.live.set(kind, list);
  }

  remove(kind: string, id: string): void {
    const list = this.live.get(kind);
    const at = list?.indexOf(id) ?? -1;
    if (list && at >= 0) list.splice(at, 1);
    const gone = this.deleted.get(kind) ?? [];
    if (!gone.includes(id)) gone.push(id);
    if (gone.length > 30) gone.shift();
    this.deleted.set(kind, gone);
  }

  addToken(kind: string, token: string): void {
    const list = this.tokens.get(kind) ?? [];
    if (list.includes(token)) return;
    list.push(token);
    if (list.length > 40) list.shift();
    this.tokens.set(kind, list);
  }

  /** Learns every id in a 2xx answer: `collection` names the kind of the top-level ones. */
  learn(collection: string | null, body: unknown): void {
    if (collection) {
      const top = body as { id?: unknown; data?: unknown };
      const items = Array.isArray(top?.data) ? top.data : [top];
      for (const item of items) {
        const id = (item as { id?: unknown })?.id;
        if (typeof id === 'string' && ID.test(id)) {
          this.prefixes.set(id.slice(0, id.indexOf('_')), collection);
          this.add(collection, id);
        }
      }
    }
    // Nested ids of kinds already known (an email's events, a campaign's audience…).
    const walk = (value: unknown, depth: number) => {
      if (depth > 4 || value === null || typeof value !== 'object') {
        if (typeof value === 'string' && ID.test(value)) {
          const kind = this.prefixes.get(value.slice(0, value.indexOf('_')));
          if (kind) this.add(kind, value);
        }
        return;
      }
      for (const inner of Array.isArray(value) ? value.slice(0, 20) : Object.values(value).slice(0, 40)) walk(inner, depth + 1);
    };
    walk(body, 0);
  }

  /** Links to this server in the mail the sink received since the last call. */
  harvestMail(): number {
    const messages = this.target.sink.messages.splice(0);
    // Tracking links use the domain's tracking host, the rest PUBLIC_URL: the paths are the same.
    const link = /https?:\/\/[A-Za-z0-9.:-]+(\/[A-Za-z0-9/._~%#=?&+-]+)/g;
    let found = 0;
    for (const message of messages) {
      // Quoted-printable soft breaks and escaped equals signs, so links come out whole.
      const text = message.raw
        .toString('utf8')
        .replace(/=\r?\n/g, '')
        .replace(/=3D/gi, '=')
        .replace(/&amp;/g, '&');
      for (const [, path] of text.matchAll(link)) {
        const match = /^\/(o|c|unsubscribe|subscribe\/confirm|subscribe\/leave)\/([^/?#\s"'<>]+)/.exec(path);
        if (!match) continue;
        const kind = { o: 'open', c: 'click', unsubscribe: 'unsubscribe', 'subscribe/confirm': 'confirm', 'subscribe/leave': 'leave' }[
          match[1]
        ]!;
        this.addToken(kind, match[2]);
        found++;
      }
    }
    return found;
  }

  count(kind: string): number {
    return this.live.get(kind)?.length ?? 0;
  }
}

type Json = any;

/** Every user the fuzzer signs up has this password (the sign-in requests use it too). */
export const FUZZ_PASSWORD = 'Fuzz-password-long-enough';

/** A JSON call for setting the world up; throws on a status it did not expect. */
export async function call(
  target: FuzzTarget,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  expect: number[] = [200, 201],
): Promise<{ status: number; body: Json; headers: Headers }> {
  if (process.env.FUZZ_DEBUG) console.log('set-up:', method, path);
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${target.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: Json = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  if (!expect.includes(response.status)) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
  return { status: response.status, body: parsed, headers: response.headers };
}

function sessionFrom(response: { body: Json; headers: Headers }, email: string, password: string): Session {
  const cookie = response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { cookie, csrf: response.body.csrf_token, userId: response.body.user.id, email, password };
}

/** Accepts an invitation token with a password; the new member's session. */
async function acceptInvitation(target: FuzzTarget, token: string, email: string): Promise<Session> {
  const password = FUZZ_PASSWORD;
  const accepted = await call(
    target,
    'POST',
    `/auth/invitations/${token}/accept`,
    { email, password },
    { authorization: '', origin: target.url },
  );
  return sessionFrom(accepted, accepted.body.user.email, password);
}

/** The invitation token of an invitation's link (…/dashboard/accept#TOKEN). */
export function tokenOfInvitation(url: string): string {
  return url.slice(url.lastIndexOf('#') + 1);
}

/** Valid bodies to make one more of each kind, `n` making them differ. */
export function recipes(world: World, n: number): Array<{ kind: string; path: () => string | null; body: () => unknown }> {
  const pick = (kind: string) => {
    const list = world.live.get(kind) ?? [];
    return list.length ? list[n % list.length] : null;
  };
  const domain = world.sendingDomain;
  return [
    { kind: 'domains', path: () => '/v2/domains', body: () => ({ name: `fuzz-extra-${n}.test`, dmarc_reports: true }) },
    {
      kind: 'templates',
      path: () => '/v2/templates',
      body: () => ({
        name: `Template ${n}`,
        alias: `tpl-${n}`,
        from: `Fuzz <hello@${domain}>`,
        subject: 'Hello {{first_name|"there"}}',
        html: `<p>Hi {{first_name}} <a href="https://example.org/p/${n}">read</a></p>`,
        text: 'Hi',
      }),
    },
    {
      kind: 'webhooks',
      path: () => '/v2/webhooks',
      body: () => ({
        name: `Hook ${n}`,
        url: `http://127.0.0.1:9/hook/${n}`,
        all_events: n % 2 === 0,
        events: n % 2 ? ['email.delivered', 'email.bounced'] : undefined,
      }),
    },
    {
      kind: 'custom-fields',
      path: () => '/v2/custom-fields',
      body: () => ({ key: `field_${n}`, label: `Field ${n}`, type: ['text', 'number', 'date', 'boolean'][n % 4] }),
    },
    {
      kind: 'audiences',
      path: () => '/v2/audiences',
      body: () => ({
        name: `Audience ${n}`,
        visibility: n % 3 === 2 ? 'private' : 'public',
        public_name: `List ${n}`,
        public_description: 'News',
        double_opt_in: n % 2 === 0 ? { enabled: true, email: { from: `lists@${domain}`, subject: 'Confirm' } } : false,
      }),
    },
    {
      kind: 'contacts',
      path: () => '/v2/contacts',
      body: () => ({
        email: `contact${n}@example.org`,
        first_name: `Ann ${n}`,
        last_name: 'Fuzz',
        audiences: pick('audiences') ? [pick('audiences')] : [],
      }),
    },
    {
      kind: 'subscribers',
      path: () => (pick('audiences') ? `/v2/audiences/${pick('audiences')}/subscribers` : null),
      body: () => ({ email: `sub${n}@example.org`, first_name: 'Sub' }),
    },
    {
      kind: 'suppressions',
      path: () => '/v2/suppressions',
      body: () => ({ email: `suppressed${n}@example.org`, type: 'recipient', reason: 'fuzz' }),
    },
    {
      kind: 'campaigns',
      path: () => '/v2/campaigns',
      body: () => ({
        name: `Campaign ${n}`,
        subject: 'News {{first_name}}',
        from_email: `news@${domain}`,
        from_name: 'Fuzz',
        html: `<p>Hello <a href="https://example.org/c/${n}">link</a> <a href="{{unsubscribe_url}}">unsubscribe</a></p>`,
        text: 'Hello {{unsubscribe_url}}',
      }),
    },
    {
      kind: 'forms',
      path: () => '/v2/forms',
      body: () => ({ name: `Form ${n}`, type: ['popup', 'full_page', 'flyout', 'embed', 'banner'][n % 5] }),
    },
    {
      kind: 'automations',
      path: () => '/v2/automations',
      body: () => ({
        context: 'contact',
        name: `Automation ${n}`,
        description: 'fuzz',
        settings: { allow_reentry: n % 2 === 0 },
        steps: [
          { key: 'joined', type: 'trigger', trigger: 'contact.added_to_audience', config: { audience_id: pick('audiences') ?? 'aud_x' } },
          {
            key: 'check',
            type: 'action',
            action: 'condition',
            config: { filter: { match: 'all', rules: [{ field: 'first_name', operator: 'is_set' }] } },
          },
          {
            key: 'mail',
            type: 'action',
            action: 'send_email',
            config: { type: 'template', template_id: `tpl-${n % 3}`, from: `hello@${domain}` },
          },
          { key: 'pause', type: 'action', action: 'wait', config: { seconds: 1 } },
          { key: 'done', type: 'action', action: 'end' },
        ],
        connections: [
          { from: 'joined', to: 'check' },
          { from: 'check', to: 'mail', branch: 'yes' },
          { from: 'check', to: 'done', branch: 'no' },
          { from: 'mail', to: 'pause' },
          { from: 'pause', to: 'done' },
        ],
      }),
    },
    {
      kind: 'email-verification-lists',
      path: () => '/v2/email-verification-lists',
      body: () => ({ name: `List ${n}`, emails: [`a${n}@example.org`, `b${n}@example.org`, 'nobody@nowhere.invalid'] }),
    },
    { kind: 'api-keys', path: () => '/v2/api-keys', body: () => ({ name: `Extra key ${n}`, scope: n % 2 ? 'sending' : 'full' }) },
    {
      kind: 'invitations',
      path: () => '/v2/invitations',
      body: () => ({ email: `invitee${n}@example.org`, role: n % 2 ? 'member' : 'admin' }),
    },
    { kind: 'holds', path: () => '/v2/delivery/holds', body: () => ({ domain: `held${n}.example.net`, reason: 'fuzz' }) },
    {
      kind: 'emails',
      path: () => '/v2/emails',
      body: () => ({
        from: `Fuzz <hello@${domain}>`,
        to: `reader${n}@example.org`,
        subject: `Tracked ${n}`,
        html: `<p>Hello <a href="https://example.org/read/${n}">read</a></p>`,
        text: 'Hello',
        tracking: { loads: true, clicks: true },
      }),
    },
    {
      kind: 'reports',
      path: () => (world.protectedIds.size && pick('domains') ? `/v2/domains/${pick('domains')}/dmarc/reports` : null),
      body: () => ({ content: Buffer.from(dmarcReport(domain, n)).toString('base64'), filename: `report-${n}.xml` }),
    },
  ];
}

function dmarcReport(domain: string, n: number): string {
  return `<?xml version="1.0"?><feedback><report_metadata><org_name>example.net</org_name><email>dmarc@example.net</email><report_id>r${n}-${Date.now()}</report_id><date_range><begin>1700000000</begin><end>1700086400</end></date_range></report_metadata><policy_published><domain>${domain}</domain><p>none</p></policy_published><record><row><source_ip>192.0.2.${n % 250}</source_ip><count>3</count><policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>${domain}</header_from></identifiers><auth_results><spf><domain>${domain}</domain><result>pass</result></spf></auth_results></record></feedback>`;
}

/** Makes one more of `kind` (or of each kind) with a valid body; what it made goes into the world. */
export async function make(world: World, n: number, only?: string): Promise<number> {
  let made = 0;
  for (const recipe of recipes(world, n)) {
    if (only && recipe.kind !== only) continue;
    const path = recipe.path();
    if (!path) continue;
    const response = await call(world.target, 'POST', path, recipe.body(), {}, [200, 201, 202, 409, 422, 400, 404]).catch(() => null);
    if (!response || response.status >= 300) {
      if (process.env.FUZZ_DEBUG)
        console.log(`could not make ${recipe.kind}: ${response?.status} ${JSON.stringify(response?.body).slice(0, 300)}`);
      continue;
    }
    made++;
    world.learn(recipe.kind, response.body);
    if (recipe.kind === 'audiences' && response.body.token) world.addToken('audiences:token', response.body.token);
    if (recipe.kind === 'api-keys' && response.body.key) world.extraKeys.push(response.body.key);
    if (recipe.kind === 'invitations' && response.body.url) world.addToken('invitations:token', tokenOfInvitation(response.body.url));
    if (recipe.kind === 'forms') {
      const published = await call(world.target, 'POST', `/v2/forms/${response.body.id}/publish`, undefined, {}, [200, 422]).catch(
        () => null,
      );
      if (published?.status === 200 && published.body.token) world.addToken('forms:token', published.body.token);
    }
    if (recipe.kind === 'emails' && Array.isArray(response.body.data)) world.learn('emails', response.body);
  }
  return made;
}

/** Creates every kind of resource, the credentials and the mail the public pages need. */
export async function buildWorld(target: FuzzTarget, perKind = 3): Promise<World> {
  const world = new World(target);
  // Keys and people first: the ones the fuzzer signs with are protected from its deletes.
  const keys = await call(target, 'GET', '/v2/api-keys');
  for (const key of keys.body.data) world.protectedIds.add(key.id);
  const sending = await call(target, 'POST', '/v2/api-keys', { name: 'Fuzz sending', scope: 'sending' });
  world.protectedIds.add(sending.body.id);
  const admin = await acceptInvitation(target, target.setupToken, 'admin@example.org');
  const invited = await call(target, 'POST', '/v2/invitations', { email: 'member@example.org', role: 'member' });
  const member = await acceptInvitation(target, tokenOfInvitation(invited.body.url), 'member@example.org');
  world.protectedIds.add(admin.userId).add(member.userId);
  world.credentials = { fullKey: target.key, sendingKey: sending.body.key, admin, member };
  // A few more members for the members' routes (role changes, removals).
  for (let i = 0; i < Math.min(2, perKind - 1); i++) {
    const more = await call(target, 'POST', '/v2/invitations', { email: `colleague${i}@example.org`, role: 'member' });
    const session = await acceptInvitation(target, tokenOfInvitation(more.body.url), `colleague${i}@example.org`);
    world.add('members', session.userId);
  }

  // The sending domain, verified through the loopback DNS server, with opens and clicks tracked.
  const domain = await call(target, 'POST', '/v2/domains', { name: world.sendingDomain });
  for (const record of domain.body.dns_records ?? []) {
    if (record.type === 'MX') target.dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
    else if (record.type === 'CNAME') target.dns.set(record.name, 'CNAME', [record.value]);
    else target.dns.set(record.name, 'TXT', [record.value]);
  }
  await call(target, 'POST', `/v2/domains/${domain.body.id}/verify`);
  await call(target, 'PATCH', `/v2/domains/${domain.body.id}`, { track_loads: true, track_clicks: true });
  world.protectedIds.add(domain.body.id);
  world.prefixes.set(domain.body.id.slice(0, domain.body.id.indexOf('_')), 'domains');

  // Three of every kind, then the things that need others to exist.
  for (let n = 0; n < perKind; n++) await make(world, n);
  const embed = await call(target, 'GET', '/v2/forms/embed').catch(() => null);
  if (embed?.body?.public_key) world.addToken('embed', embed.body.public_key);
  for (const audience of world.live.get('audiences') ?? []) {
    const subscribers = await call(target, 'GET', `/v2/audiences/${audience}/subscribers`);
    world.learn('subscribers', subscribers.body);
  }
  // A campaign sent to an audience: its mail carries unsubscribe links and tracked links.
  const [campaign] = world.live.get('campaigns') ?? [];
  const [audience] = world.live.get('audiences') ?? [];
  if (campaign && audience) {
    const recipients = await call(target, 'POST', `/v2/campaigns/${campaign}`, { recipients: [{ audience_id: audience }] }, {}, [200, 422]);
    const sent = await call(target, 'POST', `/v2/campaigns/${campaign}/send`, {}, {}, [200, 402, 409, 422]);
    if (process.env.FUZZ_DEBUG) console.log('campaign', recipients.status, sent.status, JSON.stringify(sent.body).slice(0, 300));
  }
  // Subscribing to a double opt-in list mails a confirmation link; confirmed members get leave links.
  for (const token of world.tokens.get('audiences:token') ?? []) {
    await fetch(`${target.url}/subscribe/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `email=visitor-${token.slice(0, 4)}%40example.org&first_name=Vi`,
    });
  }
  const [automation] = world.live.get('automations') ?? [];
  if (automation) {
    await call(target, 'POST', `/v2/automations/${automation}/start`, undefined, {}, [200, 409, 422]);
    world.add('steps', 'joined');
    for (const key of ['check', 'mail', 'pause', 'done']) world.add('steps', key);
  }
  // Mail takes a moment to reach the sink.
  const deadline = Date.now() + 8_000;
  while (Date.now() < deadline && !(world.tokens.get('unsubscribe')?.length && world.tokens.get('open')?.length)) {
    world.harvestMail();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // What lists show (events, webhook requests, automation runs) fills the kinds nobody creates directly.
  for (const path of ['/v2/events', '/v2/emails', '/v2/members', '/v2/invitations'])
    world.learn(path.slice(path.lastIndexOf('/') + 1), (await call(target, 'GET', path)).body);
  for (const hook of world.live.get('webhooks') ?? []) {
    await call(target, 'POST', `/v2/webhooks/${hook}/test`, {}, {}, [200, 422, 429]).catch(() => null);
    world.learn('requests', (await call(target, 'GET', `/v2/webhooks/${hook}/requests`)).body);
  }
  for (const automation of world.live.get('automations') ?? [])
    world.learn('runs', (await call(target, 'GET', `/v2/automations/${automation}/runs`)).body);
  return world;
}
