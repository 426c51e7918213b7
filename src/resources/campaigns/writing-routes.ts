// Postlane's routes for writing campaigns (writing.ts): content, duplicate, test send, and
// compiling the block editor's MJML. Registered by the campaigns resource (routes.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { AppContext } from '../../platform/context.ts';
import { errorResponses, nullable } from '../../platform/http/responses.ts';
import * as S from './schemas.ts';
import { campaignContent, duplicateCampaign, MAX_TEST_RECIPIENTS, renderEditorMjml, sendCampaignTest } from './writing.ts';

const tags = ['Campaigns'];
const text = (description: string) => Type.String({ description });
type Id = Static<typeof S.IdParams>;

const CampaignContent = Type.Object(
  {
    object: Type.Literal('campaign_content', { description: 'Always campaign_content' }),
    id: text('cmp_ id'),
    content_type: Type.Union(
      S.CONTENT_TYPES.map((t) => Type.Literal(t)),
      { description: 'html, text or mjml' },
    ),
    html: nullable(text('The HTML body with its merge tags, as sent (null when none)')),
    text: nullable(text('The plain-text body with its merge tags, as sent (null when none)')),
    content: Type.Unknown({ description: 'The editor source as given (an object given as JSON comes back as one); null when none' }),
  },
  { title: 'CampaignContent' },
);

const TestBody = Type.Object({
  emails: Type.Array(Type.String({ maxLength: 320 }), {
    minItems: 1,
    maxItems: MAX_TEST_RECIPIENTS,
    description: `Up to ${MAX_TEST_RECIPIENTS} addresses`,
  }),
});
const CampaignTest = Type.Object(
  {
    object: Type.Literal('campaign_test', { description: 'Always campaign_test' }),
    campaign_id: text('cmp_ id'),
    subject_prefix: text('What the subject of each test starts with: "[Test] "'),
    sent: Type.Array(
      Type.Object({
        email: text('The address, normalized'),
        email_id: text('em_ id of the email sent (GET /v2/emails/{id} follows it)'),
        contact_id: nullable(text('con_ id of the contact whose values filled the merge tags; null: the address alone')),
      }),
      { description: 'One email per address' },
    ),
  },
  { title: 'CampaignTest' },
);
const TestError = Type.Object(
  { message: text('What is wrong'), errors: Type.Record(Type.String(), Type.Array(Type.String()), { description: 'Messages by field' }) },
  { title: 'CampaignTestError', additionalProperties: true },
);

const RenderBody = Type.Object({ mjml: Type.String({ minLength: 1, description: 'An MJML document (at most 2 MB)' }) });
const Diagnostic = Type.Object(
  {
    severity: text('error, warning or info'),
    code: text('Stable code of the problem'),
    message: text('The problem, for a person'),
    line: Type.Optional(Type.Integer({ description: 'Line in the source' })),
    column: Type.Optional(Type.Integer({ description: 'Column in the source' })),
  },
  { additionalProperties: true },
);
const EditorRender = Type.Object(
  {
    valid: Type.Boolean({ description: 'No error was found' }),
    html: nullable(text('The compiled HTML, merge tags left as written; null when invalid')),
    diagnostics: Type.Array(Diagnostic, { description: 'Problems found, errors first' }),
  },
  { title: 'CampaignMjmlRender' },
);

export function registerWritingRoutes(app: FastifyInstance, ctx: AppContext): void {
  const workspace = (request: FastifyRequest) => request.principal.workspaceId;
  const id = (request: FastifyRequest) => (request.params as Id).id;

  app.get(
    '/campaigns/:id/content',
    {
      schema: {
        tags,
        params: S.IdParams,
        description:
          "Postlane extension: the campaign's body (html, text, content) as stored and sent; the campaign objects never include it.",
        response: { 200: CampaignContent, ...errorResponses({ 404: 'error' }) },
      },
    },
    async (request) => campaignContent(ctx.db, workspace(request), id(request)),
  );
  app.post(
    '/campaigns/:id/duplicate',
    {
      schema: {
        tags,
        params: S.IdParams,
        description:
          'Postlane extension: a new draft named "<name> (copy)" with the campaign\'s settings, audiences and body (the way to change a body, which is fixed at creation). Emits campaign.created.',
        response: { 201: S.Campaign, ...errorResponses({ 404: 'error' }) },
      },
    },
    async (request, reply) => reply.code(201).send(await duplicateCampaign(ctx.db, workspace(request), id(request))),
  );
  app.post(
    '/campaigns/:id/test',
    {
      schema: {
        tags,
        params: S.IdParams,
        body: TestBody,
        description:
          `Postlane extension: sends the campaign's body to up to ${MAX_TEST_RECIPIENTS} addresses, subject prefixed "[Test] ", merge tags filled from the contact with that address (else from the address alone, so defaults show). ` +
          'Sent as API mail: the send checks and limits apply and each email costs 1 credit. Needs from_email, a subject and a body (422).',
        response: {
          200: CampaignTest,
          ...errorResponses({ 402: 'errorMessage', 403: 'errorMessage', 404: 'error', 413: 'errorMessage', 429: 'rateLimit' }),
          // The addresses or the campaign (TestError), or the send refusing the From domain.
          422: Type.Union([TestError, errorResponses({ 422: 'errorMessage' })[422], errorResponses({ 422: 'error' })[422]]),
        },
      },
    },
    async (request) => sendCampaignTest(ctx, request.principal, id(request), (request.body as Static<typeof TestBody>).emails),
  );
  app.post(
    '/campaigns/mjml/render',
    {
      schema: {
        tags,
        body: RenderBody,
        description:
          "Postlane extension: compiles the MJML of the dashboard's block editor to HTML, for every workspace (the MJML alpha endpoints are not needed to write a campaign). 120 a minute per workspace.",
        response: { 200: EditorRender, ...errorResponses({ 422: 'fieldValidation', 429: 'rateLimit' }) },
      },
    },
    async (request) => renderEditorMjml(workspace(request), (request.body as Static<typeof RenderBody>).mjml),
  );
}
