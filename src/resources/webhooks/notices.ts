// What the owners of a workspace are told about its webhooks
// (https://emailit.com/docs/webhooks/retries-and-failures.md).
import type { Notice } from '../notifications/service.ts';
import type { SendOutcome } from './send.ts';
import type { WebhookRequestRow, WebhookRow } from './tables.ts';

export function failingNotice(hook: WebhookRow, request: WebhookRequestRow, outcome: SendOutcome): Notice {
  return {
    subject: `Webhook "${hook.name}" is failing`,
    text: [
      `Request ${request.id} (${request.event_count} event${request.event_count === 1 ? '' : 's'}) to your webhook "${hook.name}" (${hook.url}) has failed 3 times; the last answer was: ${outcome.error ?? 'no answer'}.`,
      'Postlane keeps retrying it on its schedule (11 attempts over about 3 days). If no delivery to the webhook succeeds for 3 days, the webhook is disabled.',
      `Its requests: GET /v2/webhooks/${hook.id}/requests`,
    ].join('\n\n'),
  };
}

export function disabledNotice(hook: WebhookRow, outcome: SendOutcome): Notice {
  return {
    subject: `Webhook "${hook.name}" was disabled`,
    text: [
      `No delivery to your webhook "${hook.name}" (${hook.url}) has succeeded for 3 days, so it was disabled; the last answer was: ${outcome.error ?? 'no answer'}.`,
      `Events that happen while it is disabled are not sent. Once the endpoint works again, enable the webhook (POST /v2/webhooks/${hook.id} with {"enabled": true}); failed requests can be resent by hand for 7 days.`,
    ].join('\n\n'),
  };
}
