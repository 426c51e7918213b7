// Local delivery agents (mail.local, maildrop, vpopmail, vmailmgr, Dovecot's LDA) say why they
// could not store a message in their own words, with no SMTP command involved: an "unknown user"
// from them is the mailbox's, never a filter's. The wordings are facts about those programs as
// collected by Sisimai's MDA table (https://github.com/sisimai, BSD 2-Clause, (C) azumakuniyuki).

// Each agent's marker in a report, and its wordings for a mailbox that does not exist.
const AGENTS: Array<[RegExp, string[]]> = [
  [/your message to .{1,300} was automatically rejected:/, ["mailbox doesn't exist: "]],
  [/(^|\s)mail\.local: /, [': unknown user:', ': user unknown', ': invalid mailbox path', ': user missing home directory']],
  [/(^|\s)maildrop: /, ['invalid user specified.', 'cannot find system user']],
  [/(^|\s)vdelivermail: /, ['sorry, no mailbox here by that name.']],
  [
    /(^|\s)vdeliver: /,
    ['invalid or unknown base user or domain', 'invalid or unknown virtual user', 'user name does not refer to a virtual user'],
  ],
];

/** True when a local delivery agent says the mailbox does not exist; `text` is lower-case. */
export function agentSaysUnknown(text: string): boolean {
  return AGENTS.some(([marker, phrases]) => marker.test(text) && phrases.some((phrase) => text.includes(phrase)));
}
