// Request and response bodies of queue administration and destination states (docs/delivery.md).
import { Type } from '@sinclair/typebox';
import { nullable } from '../../platform/http/responses.ts';

const text = (description: string) => Type.String({ description });

export const Hold = Type.Object(
  {
    object: Type.Literal('delivery_hold', { description: 'Always delivery_hold' }),
    id: text('hold_ id'),
    workspace_id: nullable(text('The workspace held; null for an operator hold over every workspace')),
    destination: nullable(text('Receiving provider (gmail, microsoft, yahoo…) or MX host held; null: any')),
    domain: nullable(text('Recipient domain held; null: any')),
    reason: nullable(text('Why, as given')),
    created_at: text('When the hold was put'),
  },
  { title: 'DeliveryHold' },
);

export const HoldList = Type.Object(
  { data: Type.Array(Hold, { description: 'Holds in force, oldest first' }) },
  { title: 'DeliveryHoldList' },
);

export const CreateHoldBody = Type.Object(
  {
    destination: Type.Optional(
      nullable(Type.String({ maxLength: 253, description: 'Provider (see GET /delivery/destinations) or MX host' })),
    ),
    domain: Type.Optional(nullable(Type.String({ maxLength: 253, description: 'Recipient domain' }))),
    reason: Type.Optional(nullable(Type.String({ maxLength: 500 }))),
  },
  { title: 'CreateDeliveryHold', additionalProperties: false, description: 'Without destination or domain the whole workspace is held' },
);

export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const PurgeBody = Type.Object(
  {
    domain: Type.Optional(nullable(Type.String({ maxLength: 253, description: 'Only deliveries to this recipient domain' }))),
    destination: Type.Optional(nullable(Type.String({ maxLength: 253, description: 'Only deliveries to this provider or MX host' }))),
  },
  { title: 'PurgeDeliveryQueue', additionalProperties: false },
);

export const PurgeResult = Type.Object(
  {
    object: Type.Literal('delivery_purge', { description: 'Always delivery_purge' }),
    purged: Type.Integer({ description: 'Queued emails canceled (each with email.canceled)' }),
    ids: Type.Array(Type.String(), { description: 'Their em_ ids' }),
  },
  { title: 'DeliveryPurge' },
);

const Limits = Type.Object(
  {
    connections: Type.Integer({ description: 'Connections at once' }),
    messagesPerConnection: Type.Integer({ description: 'Messages per connection' }),
    perMinute: nullable(Type.Number({ description: 'Configured messages per minute; null: no fixed limit' })),
  },
  { title: 'DestinationLimits' },
);

export const Destination = Type.Object(
  {
    destination: text('Provider name or MX host'),
    source: nullable(
      text('Local source address this state is for (IP pools: shaping is per source and destination); null: the OS-chosen source'),
    ),
    provider: nullable(text('Recognised provider, or null')),
    limits: Limits,
    current_per_minute: nullable(Type.Number({ description: 'Pace in force now; lower than the limit after throttling answers' })),
    state: Type.Union([Type.Literal('normal'), Type.Literal('throttled'), Type.Literal('paused')], {
      description: 'normal, throttled (slowed by its answers) or paused (backing off)',
    }),
    in_flight: Type.Integer({ description: 'Deliveries under way' }),
    queued: Type.Integer({ description: 'Deliveries waiting for a slot' }),
    paused_until: nullable(text('End of the current back-off')),
    accepted: Type.Integer({ description: 'Messages accepted since the worker started' }),
    throttled: Type.Integer({ description: 'Throttling answers (421, 4.7.x, try again later)' }),
    blocked: Type.Integer({ description: 'Blocks about the sender (reputation, policy)' }),
    last_throttled_at: nullable(text('Last throttling answer or block')),
    updated_at: text('When a delivery worker last wrote this state'),
  },
  { title: 'DeliveryDestination' },
);

export const DestinationList = Type.Object(
  { data: Type.Array(Destination, { description: 'Every destination the workers delivered to, by name' }) },
  { title: 'DeliveryDestinationList' },
);

// IP pools (docs/delivery.md, "IP pools").
const poolName = (description: string) => nullable(Type.String({ description }));

export const PoolAssignment = Type.Object(
  {
    all: poolName('Pool for all mail without a pool for its kind; null: none assigned'),
    transactional: poolName('Pool for transactional mail (API, SMTP); null: none assigned'),
    bulk: poolName('Pool for bulk mail (campaigns, automations); null: none assigned'),
  },
  { title: 'IpPoolAssignment' },
);

const EffectivePool = Type.Object(
  {
    pool: poolName('The pool this mail leaves from; null: no pool (the OS chooses the source address)'),
    from: nullable(
      Type.Union([Type.Literal('workspace'), Type.Literal('server'), Type.Literal('default')], {
        description:
          "workspace (its own assignment), server (every workspace's, set with the CLI), default (DELIVERY_IP_POOLS default); null: no pool",
      }),
    ),
  },
  { title: 'IpPoolChoice' },
);

export const IpPool = Type.Object(
  {
    object: Type.Literal('ip_pool', { description: 'Always ip_pool' }),
    name: text('Pool name as configured in DELIVERY_IP_POOLS'),
    default: Type.Boolean({ description: 'Used when nothing is assigned' }),
    addresses: Type.Array(
      Type.Object(
        { address: text('Local source address'), helo: text('HELO/EHLO name given from this address') },
        { title: 'IpPoolAddress' },
      ),
      { description: "The pool's source addresses; each message uses the least busy one" },
    ),
  },
  { title: 'IpPool' },
);

export const IpPoolList = Type.Object(
  {
    object: Type.Literal('ip_pool_list', { description: 'Always ip_pool_list' }),
    data: Type.Array(IpPool, { description: 'Every configured pool; empty without DELIVERY_IP_POOLS' }),
    assignment: Type.Union([PoolAssignment, Type.Null()], {
      description: "The workspace's own assignment (null only in the operator's CLI view of no workspace)",
    }),
    every_workspace: PoolAssignment,
    effective: Type.Object(
      { transactional: EffectivePool, bulk: EffectivePool },
      { description: 'The pool each kind of mail of the workspace leaves from now' },
    ),
  },
  { title: 'IpPoolList' },
);

export const AssignPoolsBody = Type.Object(
  {
    all: Type.Optional(poolName('Pool for all mail; null removes the assignment')),
    transactional: Type.Optional(poolName('Pool for transactional mail; null removes it')),
    bulk: Type.Optional(poolName('Pool for campaigns and automations; null removes it')),
  },
  { title: 'AssignIpPools', additionalProperties: false, description: 'Only the kinds given change' },
);
// Warm-up (docs/delivery.md "Warm-up").
const cap = (description: string) => nullable(Type.Integer({ description: `${description}; null: no cap (the schedule is over)` }));

export const WarmupDestination = Type.Object(
  {
    destination: text('Provider name or MX host'),
    cap: cap("Today's cap of messages to this destination"),
    sent: Type.Integer({ description: 'Messages counted today (accepted, or being delivered now)' }),
    next_day_cap: cap("Tomorrow's cap"),
    deferred: Type.Integer({ description: 'Messages over the cap waiting for a later day (backlog)' }),
  },
  { title: 'DeliveryWarmupDestination' },
);

export const Warmup = Type.Object(
  {
    object: Type.Literal('delivery_warmup', { description: 'Always delivery_warmup' }),
    id: text('wu_ id'),
    kind: Type.Union([Type.Literal('domain'), Type.Literal('address')], { description: 'A sending domain or a source IP address' }),
    subject: text('The domain name or the IP address'),
    schedule: text('Schedule name (default, or one of DELIVERY_WARMUP)'),
    started_on: text('UTC day (YYYY-MM-DD) that was day 1'),
    day: Type.Integer({ description: 'Day N of the warm-up today (UTC days, 1 on started_on)' }),
    days: Type.Integer({ description: 'Days the schedule lasts (M); from the day after, nothing is capped' }),
    status: Type.Union([Type.Literal('warming'), Type.Literal('finished')], { description: 'finished once day passes days' }),
    cap: cap("Today's cap per destination (destinations the schedule does not name)"),
    next_day_cap: cap("Tomorrow's cap per destination"),
    deferred: Type.Integer({ description: 'Messages waiting for a later day, all destinations' }),
    destinations: Type.Array(WarmupDestination, { description: 'Destinations sent to today or with a backlog, by name' }),
    created_at: text('When the warm-up was started'),
  },
  { title: 'DeliveryWarmup' },
);

export const WarmupList = Type.Object(
  { data: Type.Array(Warmup, { description: 'Domains and addresses warming up, oldest first' }) },
  { title: 'DeliveryWarmupList' },
);

export const StartWarmupBody = Type.Object(
  {
    domain: Type.Optional(nullable(Type.String({ maxLength: 253, description: 'Sending domain to warm up' }))),
    address: Type.Optional(nullable(Type.String({ maxLength: 64, description: 'Source IP address to warm up' }))),
    schedule: Type.Optional(nullable(Type.String({ maxLength: 64, description: 'Schedule name; default: the built-in 30-day schedule' }))),
  },
  { title: 'StartDeliveryWarmup', additionalProperties: false, description: 'Give a domain or an address; day 1 is today (UTC)' },
);

export const WarmupParams = Type.Object({ id: Type.String({ maxLength: 253, description: 'wu_ id, domain or address' }) });
