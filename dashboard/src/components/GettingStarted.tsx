// The overview's getting-started checklist: each step ticks itself from the workspace's real
// state (GET /v2/onboarding), links to where it is done, and the last step shows code to copy.
// Hidden once dismissed (remembered per workspace in this browser); collapsed when all done.
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { useLoad, usePolling } from '../lib/hooks';
import { Link } from '../lib/router';
import { useOptionalSession } from '../session';
import { Snippets } from './Snippets';
import { Button, ErrorBox } from './ui';

type State = Ok<'/v2/onboarding', 'get'>;
type StepKey = State['steps'][number]['key'];

const dismissKey = (workspaceId: string) => `postlane:getting-started-dismissed:${workspaceId}`;

function stepText(key: StepKey, s: State): { title: string; hint: string; href: string; action: string } {
  const domain = s.domain;
  const domainHref = domain ? `/domains/${domain.id}` : '/domains';
  switch (key) {
    case 'domain_added':
      return {
        title: 'Add a domain',
        hint: 'The domain your mail is sent from, such as example.com.',
        href: '/domains',
        action: 'Go to domains',
      };
    case 'dns_published':
      return {
        title: 'Publish its DNS records',
        hint: `Add the SPF, DKIM and return-path records${domain ? ` of ${domain.name}` : ''} at your DNS host.`,
        href: domainHref,
        action: 'See the records',
      };
    case 'domain_verified':
      return {
        title: 'Domain verified',
        hint: 'Once the records are published, verify the domain: it checks them and allows sending.',
        href: domainHref,
        action: 'Verify the domain',
      };
    case 'test_email_sent':
      return { title: 'Send a test email', hint: "From the domain's page, to your own address.", href: domainHref, action: 'Send a test' };
    case 'api_key_created':
      return {
        title: 'Create an API key',
        hint: 'Your application sends with it (over the API or the SMTP relay).',
        href: '/api-keys',
        action: 'Go to API keys',
      };
    case 'api_call_made':
      return {
        title: 'Make the first API call',
        hint: 'Call the API (or the SMTP relay) with your key, as in the examples; this step ticks when a key is used.',
        href: '/api-keys',
        action: 'Go to API keys',
      };
  }
}

export function GettingStarted() {
  const session = useOptionalSession()?.session;
  const workspaceId = session?.workspace?.id ?? '';
  const state = useLoad(() => ok(api.GET('/v2/onboarding')), []);
  const [dismissed, setDismissed] = useState(() => {
    try {
      return workspaceId !== '' && localStorage.getItem(dismissKey(workspaceId)) === '1';
    } catch {
      return false;
    }
  });
  const s = state.data;
  // Steps done elsewhere (a script's first call) tick while the overview is open.
  usePolling(state.reload, 5000, Boolean(s && !s.completed && !dismissed));
  if (dismissed || (workspaceId && isDismissed(workspaceId))) return null;
  if (!s) return <ErrorBox error={state.error} />;
  const done = s.steps.filter((step) => step.done).length;
  const dismiss = () => {
    try {
      if (workspaceId) localStorage.setItem(dismissKey(workspaceId), '1');
    } catch {
      // private mode: hidden until the next load
    }
    setDismissed(true);
  };
  const next = s.steps.find((step) => !step.done)?.key;
  return (
    <section class="card getting-started" aria-labelledby="getting-started-title">
      <details open={!s.completed}>
        <summary>
          <h2 id="getting-started-title">Getting started</h2>
          <span class="muted" role="status">
            {s.completed ? 'All done: mail is flowing.' : `${done} of ${s.steps.length} steps done`}
          </span>
        </summary>
        <ol class="checklist">
          {s.steps.map((step) => {
            const t = stepText(step.key, s);
            return (
              <li class={step.done ? 'done' : step.key === next ? 'next' : ''} data-step={step.key}>
                <span class="tick" aria-hidden="true">
                  {step.done ? '✓' : ''}
                </span>
                <div>
                  <strong>{t.title}</strong> <span class="visually-hidden">{step.done ? '(done)' : '(to do)'}</span>
                  {step.done ? null : (
                    <>
                      <p class="small-text">{t.hint}</p>
                      {step.key === next ? <Link href={t.href}>{t.action}</Link> : null}
                      {step.key === 'api_call_made' && step.key === next ? (
                        <Snippets
                          id="getting-started-snippets"
                          target={{
                            baseUrl: s.api_base_url,
                            domain: s.domain?.name ?? null,
                            apiKey: null,
                            to: session?.user.email ?? 'you@example.com',
                            smtp: s.smtp,
                          }}
                        />
                      ) : null}
                    </>
                  )}
                </div>
              </li>
            );
          })}
        </ol>
      </details>
      <Button class="small" onClick={dismiss}>
        {s.completed ? 'Hide' : 'Hide checklist'}
      </Button>
    </section>
  );
}

function isDismissed(workspaceId: string): boolean {
  try {
    return localStorage.getItem(dismissKey(workspaceId)) === '1';
  } catch {
    return false;
  }
}
