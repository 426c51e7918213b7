// What the emails feature offers the others: the mail intake (acceptMessage, the send request
// of an API-shaped body, forwards), address and content helpers, the email event object, the
// trace context of emails, and the two seams of the delivery engine that other features feed
// (campaign personalizers, tracked engagement). It loads no part of the engine that sends (the
// build threads, SMTP, the outcome journal: delivery/worker.ts and what it imports), so a
// feature or a command that only needs a helper here stays light; the engine is started by
// this feature's resource.ts.
export { acceptMessage, CAMPAIGN_DELIVER_JOB, DELIVER_LEASE_MS } from './accept.ts';
export { buildSendRequest } from './send-request.ts';
export { forwardEmail } from './forward.ts';
export { domainOf, parseAddressField } from './addresses.ts';
export { messageSize, type StoredMessage } from './content.ts';
export { emailEventObject, parseMeta, type EmailRow } from './objects.ts';
export { parseScheduledAt } from './scheduling.ts';
export { traceparentsOf } from './traces.ts';
export { forgetPersonalizers, registerPersonalizer } from './delivery/personalize.ts';
export { advanceEngagement } from './delivery/outcomes.ts';
export type { TrackingLinksTable } from './delivery/tables.ts';
