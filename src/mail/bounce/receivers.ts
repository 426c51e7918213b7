// What particular receivers mean by their own codes and wordings. A receiver is recognised by
// its host (Remote-MTA, the host named in the report) or by a code or address only it writes
// (Cox's and Spectrum's AUP#, La Poste/Orange's LPN/OFR, QQ's help pages). The tables are facts
// about those receivers' published error pages as collected by Sisimai's Rhost modules
// (https://github.com/sisimai, BSD 2-Clause, (C) azumakuniyuki), in Sisimai's reason names.

type Wordings = Array<[string, string[]]>;

interface Receiver {
  /** Host suffixes (Remote-MTA or the host the report names) or a pattern of the diagnostic. */
  hosts: RegExp;
  /** A code the receiver writes into its replies, looked up in `codes`. */
  code?: (diagnostic: string) => string | null;
  codes?: Record<string, string>;
  /** Lower-case wordings, tried in order. */
  wordings?: Wordings;
  /** Applied last, with the status and command. */
  rule?: (input: { status: string; command: string; text: string }) => string | null;
}

const FRANCE_PTT: Record<string, string> = {
  '101': 'blocked',
  '102': 'blocked',
  '103': 'blocked',
  '104': 'toomanyconn',
  '105': 'undefined',
  '107': 'undefined',
  '108': 'undefined',
  '109': 'undefined',
  '201': 'undefined',
  '305': 'securityerror',
  '401': 'authfailure',
  '402': 'securityerror',
  '403': 'rejected',
  '405': 'rejected',
  '415': 'rejected',
  '416': 'userunknown',
  '417': 'mailboxfull',
  '420': 'suspend',
  '421': 'rejected',
  '423': 'undefined',
  '424': 'undefined',
  '426': 'suspend',
  '505': 'systemerror',
  '506': 'spamdetected',
  '510': 'blocked',
  '513': 'undefined',
  '514': 'mesgtoobig',
  '517': 'authfailure',
  '630': 'policyviolation',
  '999': 'blocked',
};

const COX: Record<string, string> = {
  CXBL: 'blocked',
  CXDNS: 'requireptr',
  CXSNDR: 'authfailure',
  CXSMTP: 'rejected',
  CXCNCT: 'toomanyconn',
  CXMXRT: 'toomanyconn',
  CDRBL: 'blocked',
  CXTHRT: 'securityerror',
  CXMJ: 'securityerror',
};

// Spectrum's AUP#nnnn ranges.
const SPECTRUM: Array<[number, number, string]> = [
  [1000, 1000, 'blocked'],
  [1010, 1010, 'rejected'],
  [1020, 1080, 'rejected'],
  [1090, 1090, 'systemerror'],
  [1100, 1150, 'requireptr'],
  [1160, 1190, 'policyviolation'],
  [1200, 1250, 'blocked'],
  [1260, 1260, 'networkerror'],
  [1300, 1340, 'toomanyconn'],
  [1350, 1490, 'speeding'],
  [1500, 1520, 'rejected'],
  [1530, 1530, 'mesgtoobig'],
  [1540, 1580, 'speeding'],
];

// Microsoft 365 / Outlook.com enhanced codes with a meaning of their own.
const MICROSOFT: Array<[RegExp, string]> = [
  [/^4\.4\.7$/, 'expired'],
  [/^4\.4\.312$/, 'networkerror'],
  [/^4\.4\.316$/, 'expired'],
  [/^4\.7\.26$/, 'authfailure'],
  [/^4\.7\.[56]\d\d$/, 'blocked'],
  [/^4\.7\.8[5-9]\d$/, 'blocked'],
  [/^5\.0\.350$/, 'contenterror'],
  [/^5\.1\.10$/, 'userunknown'],
  [/^5\.4\.1$/, 'norelaying'],
  [/^5\.4\.6$/, 'networkerror'],
  [/^5\.4\.312$/, 'networkerror'],
  [/^5\.4\.316$/, 'expired'],
  [/^5\.6\.11$/, 'contenterror'],
  [/^5\.7\.23$/, 'authfailure'],
  [/^5\.7\.25$/, 'networkerror'],
  [/^5\.7\.50[1-3]$/, 'spamdetected'],
  [/^5\.7\.50[45]$/, 'filtered'],
  [/^5\.7\.50[67]$/, 'blocked'],
  [/^5\.7\.508$/, 'toomanyconn'],
  [/^5\.7\.509$/, 'authfailure'],
  [/^5\.7\.510$/, 'notaccept'],
  [/^5\.7\.511$/, 'rejected'],
  [/^5\.7\.512$/, 'policyviolation'],
  [/^5\.7\.57$/, 'securityerror'],
  [/^5\.7\.60[6-9]$/, 'blocked'],
  [/^5\.7\.6[1-4]\d$/, 'blocked'],
  [/^5\.7\.7[0-4]\d$/, 'toomanyconn'],
];

const RECEIVERS: Receiver[] = [
  {
    hosts: /\.qq\.com\b/,
    wordings: [
      ['authfailure', ['spf check failed', 'dmarc check failed']],
      ['blocked', ['suspected bounce attacks', 'suspected spam ip', 'connection denied']],
      ['mesgtoobig', ['message too large']],
      ['rejected', ['suspected spam', 'mail is rejected by recipients']],
      ['spamdetected', ['spam is embedded in the email', 'mail content denied']],
      ['speeding', ['mailbox unavailable or access denined']],
      ['suspend', ['is a deactivated mailbox']],
      ['syntaxerror', ['bad address syntax']],
      ['toomanyconn', ['ip frequency limited', 'domain frequency limited', 'sender frequency limited', 'connection frequency limited']],
      ['userunknown', ['mailbox not found']],
    ],
  },
  {
    hosts: /\.laposte\.net\b|\.orange\.fr\b|\.wanadoo\.fr\b|\b(?:LPN|LPNAAA|OFR|OUK)(?:_\d{3}|\d{3}[-_]\d{3})\b/i,
    code: (text) => {
      const match = /\b(?:LPN|LPNAAA|OFR|OUK)(_\d{3}|\d{3}[-_]\d{3})\b/i.exec(text);
      return match ? match[1].slice(-3) : null;
    },
    codes: FRANCE_PTT,
    wordings: [['authfailure', ['spf/dns de votre nom de domaine']]],
  },
  {
    hosts: /cox\.net\b|AUP#C[DX]/,
    code: (text) => /AUP#([0-9A-Z]+)/.exec(text)?.[1] ?? null,
    codes: COX,
    wordings: [
      ['blocked', ['cox too many bad commands from', 'too many invalid recipients']],
      ['requireptr', ['dns check failure - try again later', 'rejected - no rdns']],
      ['policyviolation', ['esmtp no data before greeting', 'attachment extension is forbidden']],
      ['rejected', ['sender rejected']],
      ['systemerror', ['esmtp server temporarily not available']],
      ['toomanyconn', ['too many sessions from', 'requested action aborted: try again later', 'message threshold exceeded']],
      ['userunknown', ['recipient rejected']],
    ],
  },
  {
    hosts: /charter\.net\b|spectrum\.net\b/,
    code: (text) => {
      const number = Number(/AUP#[-A-Za-z]*(\d{4})/.exec(text)?.[1] ?? 0);
      return SPECTRUM.find(([low, high]) => number >= low && number <= high)?.[2] ?? null;
    },
  },
  {
    hosts: /\.mimecast\.com\b/,
    wordings: [
      [
        'authfailure',
        ['spf sender invalid - envelope rejected', 'dkim sender invalid - envelope rejected', 'dmarc sender invalid - envelope rejected'],
      ],
      ['badreputation', ['internal resources are temporarily unavailable', 'local ct ip reputation - (reject)']],
      ['blocked', ['sender address blocked', 'recipient temporarily unavailable', 'ip temporarily blacklisted']],
      ['mesgtoobig', ['maximum email size exceeded']],
      ['networkerror', ['the incorrect hostname used for inbounds', 'mail loop detected']],
      ['norelaying', ['open relay not allowed', 'open relay is not allowed']],
      ['notaccept', ['account inbounds disabled']],
      [
        'policyviolation',
        [
          'anti-spoofing policy - inbound not allowed',
          'rejected by header-based anti-spoofing policy',
          'message bounced due to content examination policy',
          'host network not allowed',
          'host network, not allowed',
        ],
      ],
      [
        'rejected',
        [
          'administrative prohibition envelope blocked',
          'envelope blocked - user',
          'rejected by header-based',
          'envelope rejected - block policy',
        ],
      ],
      [
        'securityerror',
        ['incorrect authentication data', 'submitter failed to', 'this route requires', 'configuration is invalid for this certificate'],
      ],
      [
        'systemerror',
        [
          'unable to process connection at this time',
          'message ended early',
          'unable to process command',
          'unable to process an email at this time',
        ],
      ],
      ['toomanyconn', ['account service is temporarily unavailable', 'too many recipients', 'exceeding outbound thread limit']],
      ['userunknown', ['invalid address', 'user unknown', 'invalid recipient']],
      ['virusdetected', ['email rejected due to security policies']],
    ],
  },
  {
    hosts: /aspmx\.l\.google\.com\b|gmail-smtp-in\.l\.google\.com\b|\.google\.com\b/,
    wordings: [
      ['suspend', ['the email account that you tried to reach is inactive', 'the email account that you tried to reach is disabled']],
    ],
  },
  {
    hosts: /\.yahoodns\.net\b/,
    wordings: [
      ['rejected', ['temporarily deferred due to unexpected volume or user complaints']],
      ['userunknown', ["dd this user doesn't have a ", 'mailbox not found']],
    ],
  },
  // Yahoo's answer for an address it does not have, wherever it is relayed from.
  { hosts: /dd This user doesn't have a /i, wordings: [['userunknown', ["dd this user doesn't have a "]]] },
  {
    // Exchange Online names itself in its NDR's help text.
    hosts: /\.prod\.outlook\.com\b|\.protection\.outlook\.com\b|Exchange Online and Office 365/,
    wordings: [['userunknown', ['recipient address rejected: access denied']]],
    rule: ({ status }) => MICROSOFT.find(([pattern]) => pattern.test(status))?.[1] ?? null,
  },
  {
    // au (KDDI) answers its users' filters with "550 : User unknown", an unknown address with "550 <addr>: User unknown".
    hosts: /\.ezweb\.ne\.jp\b|msmx\.au\.com\b/,
    wordings: [
      ['filtered', ['550 : user unknown']],
      ['userunknown', ['>: user unknown']],
    ],
  },
  {
    // NTT docomo answers its users' own filters with "550 Unknown user" after DATA.
    hosts: /mfsmax\.docomo\.ne\.jp\b/,
    wordings: [
      ['mailboxfull', ['552 too much mail data']],
      ['toomanyconn', ['552 too many recipients']],
      ['syntaxerror', ['503 bad sequence of commands', '504 command parameter not implemented']],
    ],
    rule: ({ status, command }) => {
      if (status === '5.1.1') return 'userunknown';
      if (status === '5.2.0') return 'filtered';
      if (status === '5.0.0' && command === 'RCPT') return 'userunknown';
      if (status === '5.0.0' && command === 'DATA') return 'rejected';
      return null;
    },
  },
];

/** The receiver's own meaning of a reply (a Sisimai reason name), when it is one we know. */
export function receiverReason(input: { host: string; diagnostic: string; status: string; command: string }): string | null {
  const where = `${input.host} ${input.diagnostic}`;
  const text = input.diagnostic.toLowerCase();
  for (const receiver of RECEIVERS) {
    if (!receiver.hosts.test(where)) continue;
    const code = receiver.code?.(input.diagnostic);
    if (code) {
      const named = receiver.codes ? receiver.codes[code] : code;
      if (named) return named;
    }
    for (const [name, phrases] of receiver.wordings ?? []) if (phrases.some((phrase) => text.includes(phrase))) return name;
    const ruled = receiver.rule?.({ status: input.status, command: input.command, text });
    if (ruled) return ruled;
  }
  return null;
}
