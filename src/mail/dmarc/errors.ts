// A report that cannot be read: the message is the reason stored with a `failed` report.
export class DmarcReportError extends Error {}
