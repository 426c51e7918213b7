import { Type } from '@sinclair/typebox';

export const DoctorCheck = Type.Object(
  {
    id: Type.String({
      description: 'Stable check identifier, `name` or `name:subject`, e.g. `reverse_dns:203.0.113.10` or `dmarc:example.com`',
    }),
    status: Type.Union([Type.Literal('pass'), Type.Literal('warn'), Type.Literal('fail'), Type.Literal('skip')], {
      description:
        '`fail` is a blocker (mail will not be delivered or accepted until fixed); `warn` hurts deliverability; `skip`: the check could not run here',
    }),
    found: Type.String({ description: 'What was found' }),
    fix: Type.Union([Type.String(), Type.Null()], { description: 'What to do about it; null when nothing needs doing' }),
  },
  { title: 'DoctorCheck' },
);

export const SystemHealth = Type.Object(
  {
    status: Type.Union([Type.Literal('pass'), Type.Literal('warn'), Type.Literal('fail')], {
      description: 'The worst status of the checks (`skip` counts as pass)',
    }),
    checked_at: Type.String({ format: 'date-time', description: 'When the checks ran' }),
    checks: Type.Array(DoctorCheck, {
      description: 'Every check, in a fixed order: names, DNS, port 25, TLS, blocklists, each domain, clock, disk, database',
    }),
  },
  { title: 'SystemHealth' },
);
