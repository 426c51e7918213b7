// What the large mailbox providers ask of bulk senders, as numbers: Gmail's email sender
// guidelines (https://support.google.com/a/answer/81126) and Yahoo's sender requirements
// (https://senders.yahooinc.com/best-practices/) keep the spam complaint rate below 0.1 % and
// never let it reach 0.3 %. Neither publishes a bounce limit; 2 % and 5 % of hard bounces are the
// figures deliverability practice uses (a list past 5 % is badly out of date or bought).
// Rates are fractions (0.003 is 0.3 %).

export interface RateThresholds {
  /** Where a sender should stay below. */
  recommended: number;
  /** Past this, receivers filter or refuse the sender's mail. */
  limit: number;
}

export const COMPLAINT_RATE: RateThresholds = { recommended: 0.001, limit: 0.003 };
export const HARD_BOUNCE_RATE: RateThresholds = { recommended: 0.02, limit: 0.05 };

/** Where a rate stands against its thresholds. */
export function rateLevel(rate: number | null, thresholds: RateThresholds): 'ok' | 'warning' | 'over_limit' {
  if (rate === null || rate < thresholds.recommended) return 'ok';
  return rate < thresholds.limit ? 'warning' : 'over_limit';
}

/** A rate as people read it: 0.0042 → "0.42 %". */
export const percent = (rate: number) => `${(rate * 100).toFixed(2)} %`;
