// Postlane addition: GET /v2/onboarding, the dashboard's getting-started checklist (add a domain,
// publish its records, verify it, send a test, create a key, call the API) and what its code
// snippets need (the API base, the SMTP relay's host and ports).
import type { Resource } from '../../platform/resource.ts';
import { Onboarding } from './schemas.ts';
import { onboardingState } from './service.ts';

export const resource: Resource = {
  name: 'onboarding',
  v2(app, ctx) {
    app.get(
      '/onboarding',
      {
        schema: {
          tags: ['Overview'],
          summary: 'Getting started: which first steps the workspace has taken (Postlane addition)',
          description:
            'Each step is read from the workspace as it is: its domains and their last DNS check, its emails, its API keys and their last use.',
          response: { 200: Onboarding },
        },
      },
      async (request) => onboardingState(ctx, request.principal.workspaceId),
    );
  },
};
