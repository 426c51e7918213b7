// Feedback-ID, the header Gmail's feedback loop reads (https://support.google.com/mail/answer/6254652):
// `a:b:c:SenderId`, up to four colon-separated fields, the last identifying the sender. Gmail's
// Postmaster Tools then show spam rates per value of each field. Postlane's fields: the campaign
// or automation, the workspace, the kind of mail and the sending domain.

/** `<source id>:<workspace id>:<kind>:<domain>`; colons and whitespace dropped from each field. */
export function feedbackId(sourceId: string, workspaceId: string, kind: 'campaign' | 'automation', domain: string): string {
  return [sourceId, workspaceId, kind, domain].map((field) => field.replace(/[:\s]+/g, '')).join(':');
}
