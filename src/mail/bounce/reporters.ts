// What the MTA or service that wrote a bounce means by its own wordings and codes. A reporter is
// recognised by the headers of its report (X-NAI-Header, X-MSG-Ref, X-SES-Outgoing, From,
// Subject…). The wording tables are facts about those products' bounce texts as collected by
// Sisimai's Lhost modules (https://github.com/sisimai, BSD 2-Clause, (C) azumakuniyuki), in
// Sisimai's reason names; they are tried before the generic wording lists.

import phrases from '../bounce-phrases.json' with { type: 'json' };

const STATUS_NAMES = phrases.status as Record<string, string>;

export interface ReportHeaders {
  /** The raw value of a header (first occurrence), '' when absent. */
  get(name: string): string;
  /** Every Received header. */
  received: string[];
}

type Wordings = Array<[string, string[]]>;

interface Reporter {
  name: string;
  is(h: ReportHeaders): boolean;
  /** Case-sensitive wordings as the product writes them, tried in order. */
  wordings?: Wordings;
  /** The product's status code is its verdict when no wording says more (Amazon SES receiving). */
  statusIsVerdict?: boolean;
  /** A verdict the product writes into a header of its own. */
  flagged?: (h: ReportHeaders) => string | null;
  /** The product explains in prose around the reply: its wordings are looked for there too. */
  prose?: boolean;
  /** A code the product writes, looked up in `codes`. */
  code?: RegExp;
  codes?: Record<string, string>;
}

const FACEBOOK: Record<string, string> = {
  'RCP-P1': 'userunknown',
  'INT-P1': 'userunknown',
  'INT-P3': 'userunknown',
  'INT-P4': 'userunknown',
  'RCP-P2': 'filtered',
  'RCP-P3': 'filtered',
  'POL-P1': 'blocked',
  'POL-P2': 'blocked',
  'MSG-P1': 'mesgtoobig',
  'INT-P2': 'mesgtoobig',
  'MSG-P2': 'contenterror',
  'MSG-P3': 'contenterror',
  'POL-P6': 'contenterror',
  'POL-P7': 'contenterror',
  'POL-P3': 'notaccept',
  'POL-P4': 'notaccept',
  'POL-T1': 'notaccept',
  'POL-T2': 'notaccept',
  'POL-T3': 'notaccept',
  'DNS-P1': 'rejected',
  'DNS-P2': 'rejected',
  'DNS-T1': 'rejected',
  'DNS-P3': 'rejected',
  'DNS-T2': 'rejected',
  'CON-T1': 'systemerror',
  'RCP-T1': 'systemerror',
  'CON-T2': 'toomanyconn',
  'CON-T3': 'toomanyconn',
  'POL-P5': 'virusdetected',
  'RCP-T4': 'suspend',
  'MSG-T1': 'undefined',
  'CON-T4': 'undefined',
};

// Exchange 2000/2003 diagnostic codes.
const EXCHANGE2003: Record<string, string> = {
  '000B099C': 'onhold',
  '000B09AA': 'onhold',
  '000B09B6': 'onhold',
  '000C05A6': 'userunknown',
  '00010256': 'systemerror',
  '000D06B5': 'systemerror',
  '00120270': 'networkerror',
  '00050311': 'contenterror',
  '000502CC': 'contenterror',
  '000B0981': 'securityerror',
  '000C0595': 'filtered',
};

const EXIM_WORDINGS: Wordings = [
  ['userunknown', ['user not found']],
  [
    'hostunknown',
    ['all host address lookups failed permanently', 'all relevant MX records point to non-existent hosts', 'Unrouteable address'],
  ],
  ['mailboxfull', ['mailbox is full', 'error: quota exceed']],
  ['notaccept', ['an MX or SRV record indicated no SMTP service', 'no host found for existing SMTP connection']],
  [
    'syntaxerror',
    ['angle-brackets nested too deep', 'expected word or "<"', 'domain missing in source-routed address', 'malformed address:'],
  ],
  ['systemerror', ['delivery to file forbidden', 'delivery to pipe forbidden', 'local delivery failed', 'LMTP error after ']],
  ['contenterror', ['Too many "Received" headers']],
];

// Gmail's "(state N)" names the SMTP stage its relay failed at; 15, 17 and 18 come after DATA,
// where the recipient had been accepted (its filter). The other states say less than the words.
const GMAIL_STATES: Record<string, string> = { '15': 'filtered', '17': 'filtered', '18': 'filtered' };

const hasReceived = (h: ReportHeaders, part: string) => h.received.some((line) => line.includes(part));

const REPORTERS: Reporter[] = [
  {
    name: 'OpenSMTPD',
    is: (h) =>
      h.get('subject').includes('Delivery status notification') &&
      h.get('from').includes('Mailer Daemon <') &&
      hasReceived(h, ' (OpenSMTPD) with '),
    wordings: [
      ['expired', ['Envelope expired']],
      ['hostunknown', ['Invalid domain name', 'Domain does not exist']],
      ['notaccept', ['Destination seem to reject all mails', 'No MX found for domain', 'No MX found for destination']],
      [
        'networkerror',
        [
          'Address family mismatch on destination MXs',
          'All routes to destination blocked',
          'bad DNS lookup error code',
          'Could not retrieve source address',
          'Loop detected',
          'Network error on destination MXs',
          'No valid route to remote MX',
          'No valid route to destination',
          'Temporary failure in MX lookup',
        ],
      ],
      ['securityerror', ['Could not retrieve credentials']],
    ],
  },
  {
    name: 'MXLogic',
    is: (h) => Boolean(h.get('x-mx-bounce') || h.get('x-mxl-hash') || h.get('x-mxl-notehash')),
    wordings: EXIM_WORDINGS,
  },
  {
    name: 'Exim',
    is: (h) =>
      !h.get('from').includes('.mail.ru') &&
      [
        h.get('from').startsWith('Mail Delivery System'),
        /^<.{7}-.{9}@/.test(h.get('message-id')),
        [
          'Delivery Status Notification',
          'Mail delivery failed',
          'Mail failure',
          'Message frozen',
          'Warning: message ',
          'error(s) in forwarding or filtering',
        ].some((part) => h.get('subject').includes(part)),
      ].filter(Boolean).length >= 2,
    wordings: EXIM_WORDINGS,
  },
  {
    name: 'Gmail',
    is: (h) =>
      /<mailer-daemon@googlemail\.com>/i.test(h.get('from')) &&
      h.get('subject').includes('Delivery Status Notification') &&
      !h.get('x-gm-message-state'),
    code: /\(state (\d+)\)/,
    codes: GMAIL_STATES,
    wordings: [
      [
        'expired',
        [
          'DNS Error: Could not contact DNS servers',
          'Delivery to the following recipient has been delayed',
          'The recipient server did not accept our requests to connect',
        ],
      ],
      ['hostunknown', ['DNS Error: Domain name not found', 'DNS Error: DNS server returned answer with no data']],
    ],
  },
  {
    name: 'Verizon',
    prose: true,
    is: (h) =>
      /^post_master@vtext\.com$|^sysadmin@.*\.vzwpix\.com/i.test(h.get('from').replace(/^.*<|>.*$/g, '')) ||
      (/sysadmin@/i.test(h.get('from')) && /\.vzwpix\.com/i.test(h.get('from'))),
    wordings: [['userunknown', ['550 - Requested action not taken: no such user here', 'No valid recipients for this MM']]],
  },
  {
    name: 'Apache James',
    is: (h) => h.get('subject') === '[BOUNCE]' || h.get('message-id').includes('.JavaMail.') || hasReceived(h, 'JAMES SMTP Server'),
  },
  {
    name: 'McAfee',
    is: (h) => h.get('x-nai-header').includes('Modified by McAfee'),
    wordings: [['userunknown', [' User not exist', ' unknown.', '550 Unknown user ', 'No such user']]],
  },
  {
    name: 'MessageLabs',
    is: (h) => Boolean(h.get('x-msg-ref')) && /MAILER-DAEMON@messagelabs\.com/i.test(h.get('from')),
    wordings: [
      ['userunknown', ['542 ', ' Rejected', 'No such user']],
      ['securityerror', ['Please turn on SMTP Authentication in your mail client']],
    ],
  },
  {
    name: 'Amazon SES (receiving)',
    statusIsVerdict: true,
    // SES relays other receivers' reports too; its own sending reports come from amazonses.com.
    is: (h) => Boolean(h.get('x-ses-outgoing')) && !/@amazonses\.com/i.test(h.get('from')),
    wordings: [
      ['filtered', ['Mailbox does not exist']],
      ['mesgtoobig', ['Message too large']],
      ['mailboxfull', ['Mailbox full']],
      ['contenterror', ['Message content rejected']],
    ],
  },
  {
    name: 'Biglobe',
    prose: true,
    is: (h) => /postmaster@(biglobe|inacatv|tmtv|ttv)\.ne\.jp/i.test(h.get('from')) && h.get('subject').startsWith('Returned mail:'),
    wordings: [
      ['filtered', ['Mail Delivery Failed... User unknown']],
      ['mailboxfull', ["The number of messages in recipient's mailbox exceeded the local limit."]],
    ],
  },
  { name: 'Zoho', is: (h) => Boolean(h.get('x-zohomail')), wordings: [['expired', ['Host not reachable']]] },
  {
    name: 'Outlook.com',
    is: (h) =>
      [
        h.get('subject').includes('Delivery Status Notification'),
        Boolean(h.get('x-message-delivery')),
        Boolean(h.get('x-message-info')),
        hasReceived(h, '.hotmail.com'),
      ].filter(Boolean).length >= 2,
    wordings: [
      ['hostunknown', ['The mail could not be delivered to the recipient because the domain is not reachable']],
      ['userunknown', ['Requested action not taken: mailbox unavailable']],
    ],
  },
  {
    name: 'Google Workspace',
    is: (h) =>
      /<mailer-daemon@googlemail\.com>/i.test(h.get('from')) &&
      h.get('subject').includes('Delivery Status Notification') &&
      Boolean(h.get('x-gm-message-state')),
    wordings: [
      ['userunknown', ["because the address couldn't be found. Check for typos or unnecessary spaces and try again."]],
      ['notaccept', ['Null MX']],
      ['networkerror', [' had no relevant answers.', ' responded with code NXDOMAIN']],
    ],
  },
  {
    name: 'AOL',
    is: (h) => Boolean(h.get('x-aol-ip')),
    wordings: [
      ['hostunknown', ['Host or domain name not found']],
      ['notaccept', ['type=MX: Malformed or unexpected name server reply']],
    ],
  },
  {
    name: 'Domino',
    prose: true,
    is: (h) => /^DELIVERY[ _]FAILURE:/.test(h.get('subject')),
    wordings: [
      [
        'userunknown',
        [
          'not listed in Domino Directory',
          'not listed in public Name & Address Book',
          'no se encuentra en el Directorio de Domino',
          "non répertorié dans l'annuaire Domino",
          'Domino ディレクトリには見つかりません',
        ],
      ],
      ['filtered', ['Cannot route mail to user']],
      ['systemerror', ['Several matches found in Domino Directory']],
    ],
  },
  {
    name: 'KDDI',
    prose: true,
    is: (h) =>
      /no-reply@.*\.dion\.ne\.jp/i.test(h.get('from')) ||
      h.get('reply-to') === 'no-reply@app.auone-net.jp' ||
      hasReceived(h, 'ezweb.ne.jp (') ||
      hasReceived(h, '.au.com ('),
    wordings: [
      ['mailboxfull', ['As their mailbox is full']],
      ['norelaying', ['Due to the following SMTP relay error']],
      ['hostunknown', ['As the remote domain doesnt exist']],
    ],
  },
  {
    name: 'EZweb',
    prose: true,
    // au's own filter marks what it refused.
    flagged: (h) => (h.get('x-spasign') === 'NG' ? 'filtered' : null),
    is: (h) =>
      [
        /Postmaster@ezweb\.ne\.jp|Postmaster@au\.com/i.test(h.get('from')),
        h.get('subject') === 'Mail System Error - Returned Mail',
        hasReceived(h, 'ezweb.ne.jp (EZweb Mail) with'),
        hasReceived(h, '.au.com ('),
        /\.ezweb\.ne\.jp>$|\.au\.com>$/.test(h.get('message-id')),
      ].filter(Boolean).length >= 2,
    wordings: [
      ['mailboxfull', ['The user(s) account is temporarily over quota']],
      ['suspend', ['The user(s) account is disabled.', 'The user(s) account is temporarily limited.']],
      ['expired', ['Your message was not delivered within ']],
      ['onhold', ['Each of the following recipients was rejected by a remote mail server']],
    ],
  },
  {
    name: 'fml',
    prose: true,
    is: (h) => Boolean(h.get('x-mlserver')) && h.get('from').includes('-admin@') && h.get('message-id').includes('.FML'),
    wordings: [
      [
        'rejected',
        [
          ' header may cause mail loop',
          'NOT MEMBER article from ',
          'reject mail from ',
          'reject spammers:',
          'You are not a member of this mailing list',
          ' are not member',
          'Spam mail from a spammer is rejected',
        ],
      ],
      [
        'systemerror',
        [
          ' has detected a loop condition so that',
          'Duplicated Message-ID',
          'Loop Back Warning:',
          'Loop Alert: ',
          'fml system error message',
          'WARNING: UNIX FROM Loop',
        ],
      ],
      ['securityerror', ['Security alert:', 'Security Alert']],
    ],
  },
  {
    name: 'Facebook',
    is: (h) => /mailer-daemon@mx\.facebook\.com/i.test(h.get('from')),
    code: /\b((?:RCP|INT|POL|MSG|DNS|CON)-[PT]\d)\b/,
    codes: FACEBOOK,
  },
  {
    name: 'IMail',
    is: (h) => h.get('subject').startsWith('Undeliverable Mail ') || h.get('x-mailer').startsWith('<SMTP32 v'),
    wordings: [
      ['hostunknown', ['Unknown host']],
      ['userunknown', ['Unknown user', 'Invalid final delivery userid']],
      ['mailboxfull', ['User mailbox exceeds allowed size']],
      ['virusdetected', ['Requested action not taken: virus detected']],
      ['undefined', ['undeliverable to']],
      ['expired', ['Delivery failed ']],
    ],
  },
  {
    name: 'Messaging Server',
    is: (h) => h.get('content-type').includes('Boundary_(ID_') || h.get('subject').startsWith('Delivery Notification: '),
    wordings: [['hostunknown', ['Illegal host/domain name found']]],
  },
  {
    name: 'Exchange 2003',
    prose: true,
    is: (h) =>
      Boolean(h.get('x-ms-embedded-report')) ||
      /^(Internet Mail Service \(|Microsoft Exchange Server Internet Mail Connector)/.test(h.get('x-mailer')) ||
      h.get('x-mimeole').startsWith('Produced By Microsoft Exchange') ||
      hasReceived(h, ' with Internet Mail Service ('),
    code: /\b([0-9A-F]{8})\b/,
    codes: EXCHANGE2003,
  },
];

// qmail, last: its Received lines also mark mail it merely relayed.
REPORTERS.push({
  name: 'qmail',
  is: (h) => h.get('subject') === 'failure notice' || h.received.some((line) => /\(qmail \d+ invoked for bounce\)/.test(line)),
  wordings: [
    ['suspend', ['Mailaddress is administratively disabled', 'Mailaddress is administrativley disabled']],
    ['userunknown', ['Sorry, no mailbox here by that name', 'does not like recipient.']],
    ['exceedlimit', ['The message exeeded the maximum size the user accepts']],
    [
      'systemerror',
      [
        'Automatic homedir creator crashed',
        'Illegal value in LDAP attribute',
        'LDAP attribute is not given but mandatory',
        'Timeout while performing search on LDAP server',
        'Too many results returned but needs to be unique',
        'Permanent error while executing qmail-forward',
        'Temporary error in automatic homedir creation',
        'Temporary error while executing qmail-forward',
        'Temporary failure in LDAP lookup',
        'Unable to contact LDAP server',
        'Unable to login into LDAP server, bad credentials',
        'bad interpreter: No such file or directory',
      ],
    ],
    ['mailboxfull', ['disk quota exceeded']],
    ['mesgtoobig', ['Message size exceeds fixed maximum message size:']],
    ['hostunknown', ["Sorry, I couldn't find any host "]],
    ['systemfull', ['Requested action not taken: mailbox unavailable (not enough free space)']],
    ['notaccept', ["Sorry, I couldn't find a mail exchanger or IP address"]],
    [
      'networkerror',
      ["Sorry, I wasn't able to establish an SMTP connection", "Sorry. Although I'm listed as a best-preference MX or A for that host"],
    ],
  ],
});

/** The product that wrote a report, when its headers say so. */
export function reporterName(headers: ReportHeaders): string | null {
  return REPORTERS.find((reporter) => reporter.is(headers))?.name ?? null;
}

/**
 * The reporting product's own meaning of a failure (a Sisimai reason name), when it has one: its
 * wordings in the diagnostic, or in the explanation when there is no diagnostic or the product
 * explains in prose.
 */
export function reporterReason(
  headers: ReportHeaders,
  diagnostic: string | null,
  explanation: string,
  status: string | null = null,
): string | null {
  for (const reporter of REPORTERS) {
    if (!reporter.is(headers)) continue;
    const flagged = reporter.flagged?.(headers);
    if (flagged) return flagged;
    const texts = diagnostic && !reporter.prose ? [diagnostic] : diagnostic ? [diagnostic, explanation] : [explanation];
    for (const text of texts) {
      const code = reporter.code?.exec(text)?.[1];
      if (code && reporter.codes?.[code]) return reporter.codes[code];
      for (const [name, phrases] of reporter.wordings ?? []) if (phrases.some((phrase) => text.includes(phrase))) return name;
    }
    if (reporter.statusIsVerdict && status && STATUS_NAMES[status]) return STATUS_NAMES[status];
  }
  return null;
}
