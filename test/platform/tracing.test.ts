// OpenTelemetry traces as a collector sees them: one send, from the API request or the SMTP
// submission to the webhook POST about its delivery, is one trace, exported over OTLP/HTTP
// (JSON) to a receiver on loopback; and with no endpoint configured nothing is traced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/app.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { startSmtpApp, submit, type SmtpApp } from '../smtp/helpers.ts';

const otlpEnv = (receiver: OtlpReceiver) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_SERVICE_NAME: 'postlane-test',
  WEBHOOK_POLL_MS: '50',
});

async function subscribe(app: SmtpApp, webhooks: WebhookReceiver): Promise<void> {
  const created = await app.api.post('/v2/webhooks', { name: 'traced', url: `${webhooks.url}/hook`, all_events: true });
  assert.equal(created.status, 201, created.text);
}

/** Waits for the email's delivery and the webhook POST telling of it. */
async function deliveredAndTold(app: SmtpApp, webhooks: WebhookReceiver, id: string) {
  await app.waitForStatus(id, 'delivered');
  await app.sink.waitForMessages(1, 20_000);
  return eventually(async () =>
    webhooks.requests.find((request) => request.json?.some?.((item: any) => item.type === 'email.delivered' && item.object.id === id)),
  );
}

/** The spans of one trace, checked: one trace id, the email id on every span, parents inside the trace. */
function checkTrace(spans: ReceivedSpan[], traceId: string, emailId: string) {
  const trace = spans.filter((span) => span.traceId === traceId);
  const byId = new Map(trace.map((span) => [span.spanId, span]));
  for (const span of trace) {
    assert.equal(span.attributes['postlane.email_id'], emailId, `${span.name} carries the email id: ${JSON.stringify(span.attributes)}`);
    assert.equal(span.service, 'postlane-test');
  }
  const named = (name: string) => {
    const found = trace.filter((span) => span.name === name);
    assert.ok(found.length > 0, `a ${name} span in the trace; got ${trace.map((span) => span.name).join(', ')}`);
    return found;
  };
  const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId);
  return { trace, named, parentOf };
}

test('no endpoint configured: nothing is traced, no traceparent is stored or sent', async (t) => {
  const webhooks = await startWebhookReceiver();
  const app = await startSmtpApp({ WEBHOOK_POLL_MS: '50' });
  t.after(async () => {
    await app.close();
    await webhooks.close();
  });
  await subscribe(app, webhooks);
  const sent = await app.api.post('/v2/emails', { from: 'hello@acme.test', to: 'someone@example.org', subject: 'Untraced', text: 'Hi' });
  assert.equal(sent.status, 200, sent.text);
  const told = await deliveredAndTold(app, webhooks, sent.body.id);
  assert.equal(told.headers.traceparent, undefined);
  assert.equal((await app.email(sent.body.id)).traceparent, null);
});

test('an API send is one trace: request, acceptance, job, build, SMTP delivery, webhook', async (t) => {
  const collector = await startOtlpReceiver();
  const webhooks = await startWebhookReceiver();
  const app = await startSmtpApp(otlpEnv(collector));
  let closed = false;
  t.after(async () => {
    if (!closed) await app.close();
    await webhooks.close();
    await collector.close();
  });
  await subscribe(app, webhooks);
  // The caller's own trace continues through Postlane.
  const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const callerSpan = '00f067aa0ba902b7';
  const sent = await app.api.post(
    '/v2/emails',
    { from: 'hello@acme.test', to: 'someone@example.org', subject: 'Traced', text: 'Hi' },
    { traceparent: `00-${callerTrace}-${callerSpan}-01` },
  );
  assert.equal(sent.status, 200, sent.text);
  const id = sent.body.id;
  const told = await deliveredAndTold(app, webhooks, id);
  await app.close(); // flushes the spans
  closed = true;

  assert.deepEqual(collector.refused, []);
  const { named, parentOf } = checkTrace(collector.spans, callerTrace, id);
  const [request] = named('POST /v2/emails');
  assert.equal(request.parentSpanId, callerSpan);
  assert.equal(request.attributes['http.response.status_code'], 200);
  const [accept] = named('email.accept');
  assert.equal(parentOf(accept), request);
  const [job] = named('job email.deliver');
  assert.equal(parentOf(job), accept, 'the job, run later, is a child of the acceptance');
  const [build] = named('email.build');
  assert.equal(parentOf(build), job, 'the build thread works inside the job');
  assert.ok(build.endNs >= build.startNs && build.startNs >= job.startNs && build.endNs <= job.endNs, 'the build within the job');
  const [smtp] = named('smtp.deliver');
  assert.equal(parentOf(smtp), job);
  assert.equal(smtp.attributes['postlane.outcome'], 'delivered');
  const posts = named('webhook.send');
  assert.ok(posts.every((post) => parentOf(post) === accept));
  // The webhook request carries the traceparent of its span.
  const header = String(told.headers.traceparent);
  const [, headerTrace, headerSpan] = header.split('-');
  assert.equal(headerTrace, callerTrace);
  assert.ok(
    posts.some((post) => post.spanId === headerSpan),
    `the header ${header} names a webhook.send span`,
  );
});

test('an SMTP submission is one trace: submission, acceptance, job, build, SMTP delivery, webhook', async (t) => {
  const collector = await startOtlpReceiver();
  const webhooks = await startWebhookReceiver();
  const app = await startSmtpApp(otlpEnv(collector));
  let closed = false;
  t.after(async () => {
    if (!closed) await app.close();
    await webhooks.close();
    await collector.close();
  });
  await subscribe(app, webhooks);
  const submitted = await submit(
    { port: app.ports.submission, key: app.key },
    { from: 'hello@acme.test', to: 'someone@example.org', subject: 'Traced by SMTP', text: 'Hi' },
  );
  assert.ok(submitted.ok && submitted.id, submitted.response);
  const id = submitted.id!;
  const told = await deliveredAndTold(app, webhooks, id);
  await app.close();
  closed = true;

  const [submission] = collector.spans.filter((span) => span.name === 'smtp.submission' && span.attributes['postlane.email_id'] === id);
  assert.ok(submission, 'the submission span');
  assert.equal(submission.parentSpanId, '', 'the root of its trace');
  const { trace, named, parentOf } = checkTrace(collector.spans, submission.traceId, id);
  assert.equal(parentOf(named('email.accept')[0]), submission);
  for (const name of ['job email.deliver', 'email.build', 'smtp.deliver', 'webhook.send']) named(name);
  assert.equal(String(told.headers.traceparent).split('-')[1], submission.traceId);
  assert.ok(trace.length >= 6);
});
