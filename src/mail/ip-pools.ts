// IP pools (docs/delivery.md, "IP pools"): named sets of local source addresses the outbound
// SMTP connections are bound to, each address with the HELO/EHLO name its reverse DNS carries.
// The operator lists them in DELIVERY_IP_POOLS; which pool a workspace's transactional and bulk
// mail use is assigned by admins (src/resources/delivery-queue/pools.ts). Without pools the OS
// picks the source and the EHLO name is MAIL_HOSTNAME, as before.
import { isIP } from 'node:net';

export interface PoolAddress {
  /** Local IPv4 or IPv6 address connections are bound to. */
  address: string;
  /** HELO/EHLO name given on connections from this address (its PTR name). */
  helo: string;
}

export interface IpPool {
  name: string;
  addresses: PoolAddress[];
}

export interface IpPools {
  pools: IpPool[];
  /** The pool used when nothing is assigned; null: the OS chooses the source. */
  defaultPool: string | null;
}

export const NO_POOLS: IpPools = { pools: [], defaultPool: null };

const POOL_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * DELIVERY_IP_POOLS: a JSON object of pools by name, e.g.
 * `{"transactional": {"default": true, "addresses": [{"address": "203.0.113.10", "helo": "mta1.example.com"}]},
 *   "bulk": {"addresses": [{"address": "203.0.113.20", "helo": "mta2.example.com"}, "203.0.113.21"]}}`.
 * An address given as a bare string says its HELO name is `mailHostname`. Throws on anything else.
 */
export function parseIpPools(value: string | undefined | null, mailHostname: string): IpPools {
  if (!value || !value.trim()) return NO_POOLS;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error('DELIVERY_IP_POOLS must be JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('DELIVERY_IP_POOLS must be a JSON object of pools by name');
  const pools: IpPool[] = [];
  let defaultPool: string | null = null;
  const seen = new Map<string, string>();
  for (const [rawName, spec] of Object.entries(parsed as Record<string, unknown>)) {
    const name = rawName.toLowerCase();
    if (!POOL_NAME.test(name)) throw new Error(`DELIVERY_IP_POOLS pool name "${rawName}" must be letters, digits, - or _ (at most 64)`);
    if (!spec || typeof spec !== 'object' || Array.isArray(spec))
      throw new Error(`DELIVERY_IP_POOLS ${name} must be an object with "addresses"`);
    const { addresses, default: isDefault, ...rest } = spec as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length) throw new Error(`DELIVERY_IP_POOLS ${name} has unknown field "${unknown[0]}" (addresses, default)`);
    if (!Array.isArray(addresses) || addresses.length === 0)
      throw new Error(`DELIVERY_IP_POOLS ${name}.addresses must be a non-empty list`);
    const list = addresses.map((entry, index) => poolAddress(entry, `${name}.addresses[${index}]`, mailHostname));
    for (const { address } of list) {
      // One address in two pools would share its connections and shaping state between them.
      const other = seen.get(address);
      if (other) throw new Error(`DELIVERY_IP_POOLS address ${address} is in both ${other} and ${name}`);
      seen.set(address, name);
    }
    if (isDefault !== undefined && typeof isDefault !== 'boolean')
      throw new Error(`DELIVERY_IP_POOLS ${name}.default must be true or false`);
    if (isDefault) {
      if (defaultPool) throw new Error(`DELIVERY_IP_POOLS marks both ${defaultPool} and ${name} as default`);
      defaultPool = name;
    }
    pools.push({ name, addresses: list });
  }
  return { pools, defaultPool };
}

function poolAddress(entry: unknown, where: string, mailHostname: string): PoolAddress {
  const spec = typeof entry === 'string' ? { address: entry } : entry;
  if (!spec || typeof spec !== 'object' || Array.isArray(spec))
    throw new Error(`DELIVERY_IP_POOLS ${where} must be an address or {"address", "helo"}`);
  const { address, helo } = spec as Record<string, unknown>;
  if (typeof address !== 'string' || !isIP(address)) throw new Error(`DELIVERY_IP_POOLS ${where}.address must be an IP address`);
  const name = helo === undefined ? mailHostname : helo;
  if (typeof name !== 'string' || !HOST_NAME.test(name)) throw new Error(`DELIVERY_IP_POOLS ${where}.helo must be a host name`);
  return { address, helo: name.toLowerCase() };
}

export function findPool(pools: IpPools, name: string | null | undefined): IpPool | null {
  return name ? (pools.pools.find((pool) => pool.name === name) ?? null) : null;
}

/** A source address taken for one message; `release` when its delivery is over. */
export interface SourceLease extends PoolAddress {
  pool: string;
  release(): void;
}

/**
 * Picks a pool's source address per message: the least used one (fewest deliveries under way
 * from it), ties taken in turn, so a pool's addresses share the load evenly.
 */
export class SourcePicker {
  private readonly pools: IpPools;
  private readonly inUse = new Map<string, number>();
  private readonly turn = new Map<string, number>();

  constructor(pools: IpPools) {
    this.pools = pools;
  }

  /** Whether pool `name` is configured (else the OS chooses the source). */
  has(name: string | null | undefined): boolean {
    return findPool(this.pools, name) !== null;
  }

  /**
   * A source of pool `name` for a connection to an address of IP `family` (4 or 6); null when
   * the pool is not configured or has no address of that family (left when all are `excluded`).
   */
  acquire(name: string | null | undefined, family: number, excluded: readonly string[] = []): SourceLease | null {
    const pool = findPool(this.pools, name);
    if (!pool) return null;
    const start = this.turn.get(pool.name) ?? 0;
    let best: PoolAddress | null = null;
    for (let i = 0; i < pool.addresses.length; i++) {
      const candidate = pool.addresses[(start + i) % pool.addresses.length];
      if (isIP(candidate.address) !== family || excluded.includes(candidate.address)) continue;
      if (!best || (this.inUse.get(candidate.address) ?? 0) < (this.inUse.get(best.address) ?? 0)) best = candidate;
    }
    if (!best) return null;
    const chosen = best;
    this.turn.set(pool.name, (start + 1) % pool.addresses.length);
    this.inUse.set(chosen.address, (this.inUse.get(chosen.address) ?? 0) + 1);
    let released = false;
    return {
      pool: pool.name,
      address: chosen.address,
      helo: chosen.helo,
      release: () => {
        if (released) return;
        released = true;
        this.inUse.set(chosen.address, (this.inUse.get(chosen.address) ?? 1) - 1);
      },
    };
  }

  /** Deliveries under way per source address (for tests and reports). */
  usage(): Record<string, number> {
    return Object.fromEntries(this.inUse);
  }
}

/** The traffic shaping key of a destination reached from `source`: with pools each source
 *  address has its own pace at each destination (receivers judge and throttle per IP). */
export function sourcedKey(destination: string, source: string | null | undefined): string {
  return source ? `${destination}@${source}` : destination;
}
