// `postlane delivery …` (docs/delivery.md): each destination's traffic shaping state, and queue
// administration — hold, release and purge queued deliveries by destination, recipient domain
// or workspace. A hold without --workspace applies to every workspace (operator only).
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { ApiError } from '../platform/http/errors.ts';
import { createOutboundDelivery } from '../mail/smtp-delivery.ts';
import { TrafficShaper } from '../mail/shaping.ts';
import { createHold, destinationStates, holdObject, listHolds, purgeQueue, releaseHold } from '../resources/delivery-queue/service.ts';
import { UsageError } from './usage-error.ts';
import { withDatabase } from './workspace.ts';

const out = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

export async function deliveryCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action === 'warmup') return (await import('./delivery-warmup.ts')).warmupCommand(rest);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      workspace: { type: 'string' },
      destination: { type: 'string' },
      domain: { type: 'string' },
      reason: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  try {
    switch (action) {
      case 'destinations': {
        const states = await withDatabase((db) => destinationStates(db));
        if (values.json) return (out({ data: states }), 0);
        if (states.length === 0) process.stdout.write('No destination has been delivered to yet.\n');
        for (const s of states) {
          const pace = s.current_per_minute === null ? 'no limit' : `${s.current_per_minute}/min`;
          const limit = s.limits.perMinute === null ? 'adaptive' : `${s.limits.perMinute}/min`;
          process.stdout.write(
            `${(s.source ? `${s.destination} from ${s.source}` : s.destination).padEnd(28)} ${s.state.padEnd(9)} pace ${pace} (limit ${limit}, ${s.limits.connections} conn, ${s.limits.messagesPerConnection}/conn)` +
              ` in flight ${s.in_flight}, queued ${s.queued}, accepted ${s.accepted}, throttled ${s.throttled}, blocked ${s.blocked}` +
              `${s.paused_until ? `, paused until ${s.paused_until}` : ''} [${s.updated_at}]\n`,
          );
        }
        return 0;
      }
      case 'hold': {
        if (!values.workspace && !values.destination && !values.domain)
          throw new UsageError('a hold over every workspace needs --destination or --domain (or give --workspace ID)');
        const hold = await withDatabase((db) =>
          createHold(db, values.workspace ?? null, { destination: values.destination, domain: values.domain, reason: values.reason }),
        );
        if (values.json) return (out(holdObject(hold)), 0);
        process.stdout.write(`Hold ${hold.id}: ${describe(hold)}. Release with: postlane delivery release ${hold.id}\n`);
        return 0;
      }
      case 'holds': {
        const holds = await withDatabase((db) => listHolds(db, values.workspace ?? null));
        if (values.json) return (out({ data: holds.map(holdObject) }), 0);
        if (holds.length === 0) process.stdout.write('No holds.\n');
        for (const hold of holds)
          process.stdout.write(`${hold.id}  ${describe(hold)}  since ${hold.created_at}${hold.reason ? ` (${hold.reason})` : ''}\n`);
        return 0;
      }
      case 'release': {
        if (positionals.length !== 1) throw new UsageError('delivery release takes a hold id');
        const hold = await withDatabase((db) => releaseHold(db, null, positionals[0]));
        if (values.json) return (out(holdObject(hold)), 0);
        process.stdout.write(`Released ${hold.id} (${describe(hold)}); its deliveries go out within 30 seconds.\n`);
        return 0;
      }
      case 'purge': {
        if (!values.workspace) throw new UsageError('delivery purge needs --workspace ID');
        const lookup = values.destination ? createOutboundDelivery(loadConfig(), { shaper: new TrafficShaper() }) : null;
        try {
          const result = await withDatabase((db) =>
            purgeQueue(
              db,
              values.workspace!,
              { domain: values.domain, destination: values.destination },
              lookup ? (to) => lookup.destinationKeyOf(to) : undefined,
            ),
          );
          if (values.json) return (out({ object: 'delivery_purge', ...result }), 0);
          process.stdout.write(`Purged ${result.purged} queued deliveries (status canceled, email.canceled emitted).\n`);
          return 0;
        } finally {
          await lookup?.close();
        }
      }
      default:
        throw new UsageError('delivery takes destinations, holds, hold, release, purge or warmup');
    }
  } catch (error) {
    if (error instanceof ApiError) throw new UsageError(error.message);
    throw error;
  }
}

function describe(hold: { workspace_id: string | null; destination: string | null; domain: string | null }): string {
  const parts = [hold.workspace_id ? `workspace ${hold.workspace_id}` : 'every workspace'];
  if (hold.destination) parts.push(`destination ${hold.destination}`);
  if (hold.domain) parts.push(`domain ${hold.domain}`);
  return parts.join(', ');
}
