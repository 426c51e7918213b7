// `postlane delivery warmup …` (docs/delivery.md "Warm-up"): domains and source addresses warming
// up — day N of M, today's cap and count per destination, the deferred backlog — and starting or
// stopping a warm-up.
import { parseArgs } from 'node:util';
import { ApiError } from '../platform/http/errors.ts';
import { startWarmup, stopWarmup, warmupObject, warmupStates, type WarmupObject } from '../resources/warmup/service.ts';
import { UsageError } from './usage-error.ts';
import { withDatabase } from './workspace.ts';

const out = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
const capText = (cap: number | null) => (cap === null ? 'no cap' : String(cap));

function describe(w: WarmupObject): string {
  const head =
    `${w.id}  ${w.kind} ${w.subject}  ${w.status === 'finished' ? `finished (schedule ${w.schedule}, ${w.days} days)` : `day ${w.day} of ${w.days} (schedule ${w.schedule})`}` +
    `  cap ${capText(w.cap)}/destination today, ${capText(w.next_day_cap)} tomorrow, ${w.deferred} deferred\n`;
  return (
    head +
    w.destinations
      .map(
        (d) =>
          `    ${d.destination.padEnd(28)} sent ${d.sent} of ${capText(d.cap)}, tomorrow ${capText(d.next_day_cap)}, deferred ${d.deferred}\n`,
      )
      .join('')
  );
}

export async function warmupCommand(args: string[]): Promise<number> {
  const first = args[0] && !args[0].startsWith('-') ? args[0] : undefined;
  const { values, positionals } = parseArgs({
    args: first ? args.slice(1) : args,
    allowPositionals: true,
    options: { domain: { type: 'string' }, address: { type: 'string' }, schedule: { type: 'string' }, json: { type: 'boolean' } },
  });
  try {
    switch (first) {
      case undefined:
      case 'list': {
        const states = await withDatabase((db) => warmupStates(db));
        if (values.json) return (out({ data: states }), 0);
        if (states.length === 0) process.stdout.write('Nothing is warming up.\n');
        for (const w of states) process.stdout.write(describe(w));
        return 0;
      }
      case 'start': {
        if (!values.domain === !values.address) throw new UsageError('delivery warmup start needs --domain D or --address IP');
        const view = await withDatabase(async (db) =>
          warmupObject(db, await startWarmup(db, { domain: values.domain, address: values.address, schedule: values.schedule })),
        );
        if (values.json) return (out(view), 0);
        process.stdout.write(
          `Warming up ${view.kind} ${view.subject}: day 1 of ${view.days}, ${capText(view.cap)} messages per destination today. Stop with: postlane delivery warmup stop ${view.subject}\n`,
        );
        return 0;
      }
      case 'stop': {
        if (positionals.length !== 1) throw new UsageError('delivery warmup stop takes a warm-up id, domain or address');
        const row = await withDatabase((db) => stopWarmup(db, positionals[0]));
        if (values.json) return (out({ object: 'delivery_warmup', id: row.id, kind: row.kind, subject: row.subject }), 0);
        process.stdout.write(`Stopped the warm-up of ${row.subject} (${row.id}); its deferred mail goes out now.\n`);
        return 0;
      }
      default:
        throw new UsageError('delivery warmup takes list, start or stop');
    }
  } catch (error) {
    if (error instanceof ApiError) {
      const body = error.body as { message?: string; errors?: Record<string, string[]> };
      throw new UsageError(body.errors ? Object.values(body.errors).flat().join('; ') : (body.message ?? error.message));
    }
    throw error;
  }
}
