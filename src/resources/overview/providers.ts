// Recipient providers of the overview's breakdown, known by the recipient's domain: the large
// consumer mailbox providers' own domains (their MX hosts are in src/mail/shaping.ts). Mail to a
// company domain hosted by one of them (Google Workspace, Microsoft 365) counts under "others":
// telling those apart would need each domain's MX, which the overview does not look up.
import { sql, type RawBuilder } from 'kysely';
import { dialectOf, type Db } from '../../platform/db/database.ts';

export const PROVIDERS = [
  { provider: 'gmail', name: 'Gmail', domains: ['gmail.com', 'googlemail.com'] },
  {
    provider: 'microsoft',
    name: 'Outlook',
    domains: [
      'outlook.com',
      'hotmail.com',
      'live.com',
      'msn.com',
      'passport.com',
      'hotmail.co.uk',
      'hotmail.fr',
      'hotmail.de',
      'hotmail.it',
      'hotmail.es',
      'outlook.fr',
      'outlook.de',
      'outlook.es',
      'live.co.uk',
      'live.fr',
      'live.de',
      'live.nl',
      'live.ca',
      'windowslive.com',
    ],
  },
  {
    provider: 'yahoo',
    name: 'Yahoo',
    domains: [
      'yahoo.com',
      'ymail.com',
      'rocketmail.com',
      'yahoo.co.uk',
      'yahoo.fr',
      'yahoo.de',
      'yahoo.it',
      'yahoo.es',
      'yahoo.ca',
      'yahoo.com.au',
      'yahoo.co.jp',
      'yahoo.com.br',
      'yahoo.co.in',
      'aol.com',
      'aim.com',
    ],
  },
  { provider: 'apple', name: 'iCloud', domains: ['icloud.com', 'me.com', 'mac.com'] },
] as const;
export const OTHERS = { provider: 'others', name: 'Others' } as const;
export type ProviderKey = (typeof PROVIDERS)[number]['provider'] | 'others';

/** SQL naming the provider of an email's recipient (`emails.to`). */
export function providerOfRecipient(db: Db): RawBuilder<string> {
  const at = dialectOf(db) === 'postgres' ? sql`strpos(${sql.ref('to')}, '@')` : sql`instr(${sql.ref('to')}, '@')`;
  const domain = sql`lower(substr(${sql.ref('to')}, ${at} + 1))`;
  const cases = PROVIDERS.map((p) => sql`when ${domain} in (${sql.join(p.domains.map((d) => sql.lit(d)))}) then ${sql.lit(p.provider)}`);
  return sql<string>`case ${sql.join(cases, sql` `)} else ${sql.lit(OTHERS.provider)} end`;
}

export const providerName = (key: string) => PROVIDERS.find((p) => p.provider === key)?.name ?? OTHERS.name;
