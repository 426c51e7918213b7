// Response body of GET /v2/onboarding (a Postlane addition).
import { Type } from '@sinclair/typebox';
import { nullable } from '../../platform/http/responses.ts';
import { STEP_KEYS } from './service.ts';

const text = (description: string) => Type.String({ description });

const Step = Type.Object(
  {
    key: Type.Union(
      STEP_KEYS.map((k) => Type.Literal(k)),
      {
        description:
          'domain_added, dns_published (SPF, DKIM and return path check out), domain_verified, test_email_sent (any email sent), api_key_created (a key besides the first-start "Default key"), api_call_made (a key has been used)',
      },
    ),
    done: Type.Boolean({ description: 'Whether the workspace has taken the step' }),
  },
  { title: 'OnboardingStep' },
);

export const Onboarding = Type.Object(
  {
    object: Type.Literal('onboarding', { description: 'Always onboarding' }),
    completed: Type.Boolean({ description: 'Every step is done' }),
    steps: Type.Array(Step, { description: 'The steps in order' }),
    domain: nullable(
      Type.Object(
        {
          id: text('dom_ id'),
          name: text('The domain'),
          verification_status: Type.Union([Type.Literal('verified'), Type.Literal('pending'), Type.Literal('pending_review')], {
            description: 'Its verification status',
          }),
        },
        { description: 'The domain the steps are about: a verified one, else the newest' },
      ),
    ),
    api_base_url: text('PUBLIC_URL: what the Emailit SDKs take as their API base (the v2 API is under /v2)'),
    smtp: Type.Object(
      {
        host: text("MAIL_HOSTNAME: the SMTP relay's host"),
        port: nullable(Type.Integer({ description: 'SMTP_SUBMISSION_PORT (STARTTLS); null when off' })),
        tls_port: nullable(Type.Integer({ description: 'SMTP_SUBMISSION_TLS_PORT (implicit TLS); null when off' })),
      },
      { description: 'The SMTP relay: any username, an API key as password' },
    ),
  },
  { title: 'Onboarding' },
);
