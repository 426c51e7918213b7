// The public side of a live form (no key): what the embed script needs to render it, with a
// fresh proof-of-work challenge, and the submission of its fields
// (https://emailit.com/docs/forms.md): load and submit by the form's public token; only `live`
// forms answer. A submission is stored with the form and creates no contact.
import type { Db } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { fieldValidationError, messageError, plainError } from '../../platform/http/errors.ts';
import { challengeDigest, type ChallengeIssuer, type Proof, type ProofRefusal } from './challenge.ts';
import { inputsOf, stepsFor, type Definition } from './definition.ts';
import { checkFields } from './fields.ts';

const TOKEN = /^[A-Za-z0-9]{1,64}$/;

async function liveFormByToken(db: Db, token: string) {
  if (!TOKEN.test(token)) return undefined;
  return db
    .selectFrom('forms')
    .select(['id', 'workspace_id', 'token', 'type', 'definition'])
    .where('token', '=', token)
    .where('status', '=', 'live')
    .executeTakeFirst();
}

const notFound = () => plainError(404, 'Form not found');

export async function loadPublicForm(db: Db, challenges: ChallengeIssuer, token: string) {
  const form = await liveFormByToken(db, token);
  if (!form) throw notFound();
  return {
    object: 'public_form' as const,
    token: form.token,
    type: form.type,
    definition: JSON.parse(form.definition) as Record<string, unknown>,
    challenge: await challenges.issue(form.token),
    submit_url: `/v2/forms/${form.token}/submit`,
  };
}

export interface SubmitInput {
  fields: Record<string, unknown>;
  page_url?: string;
  experiment_id?: string;
  variant_id?: string;
  /** The hidden field people never see: a bot that fills it is answered as if it succeeded. */
  honeypot?: string;
  proof?: Proof;
}

const REFUSALS: Record<ProofRefusal | 'used', [string, string]> = {
  missing: ['Proof of work required', 'Solve the challenge of GET /v2/forms/{token} and send its solution as proof'],
  invalid: ['Proof of work invalid', 'The proof does not solve a challenge issued by this server'],
  other_form: ['Proof of work invalid', 'The challenge was issued for another form'],
  expired: ['Proof of work expired', 'The challenge has expired; load the form again for a new one'],
  used: ['Proof of work already used', 'Each challenge is accepted once; load the form again for a new one'],
};
const refused = (reason: ProofRefusal | 'used') => messageError(403, ...REFUSALS[reason]);

/** The variant the visitor was shown, when it is one of the definition's experiment. */
function shownVariant(definition: Definition, input: SubmitInput): { experimentId: string; variantId: string } | null {
  const experiment = definition.experiments?.[0];
  if (!experiment || input.experiment_id !== experiment.id) return null;
  const variant = experiment.variants.find((v) => v.id === input.variant_id);
  return variant ? { experimentId: experiment.id, variantId: variant.id } : null;
}

function pageUrlOf(given: string | undefined, referer: string | undefined): string | null {
  const url = given ?? referer;
  return url && url.length <= 2048 ? url : null;
}

export async function submitPublicForm(
  db: Db,
  challenges: ChallengeIssuer,
  token: string,
  input: SubmitInput,
  referer: string | undefined,
) {
  const form = await liveFormByToken(db, token);
  if (!form) throw notFound();
  const refusal = await challenges.refusal(form.token, input.proof);
  if (refusal) throw refused(refusal);
  const definition = JSON.parse(form.definition) as Definition;
  const variant = shownVariant(definition, input);
  const steps = stepsFor(definition, variant?.variantId ?? null);
  const { fields, errors } = checkFields(inputsOf(steps), input.fields);
  if (Object.keys(errors).length > 0) throw fieldValidationError(errors);
  const answer = {
    object: 'form_submission' as const,
    id: newId('fsub'),
    created_at: nowIso(),
    success_step: steps.find((step) => step.kind === 'success')!,
  };
  if (input.honeypot) return answer;
  try {
    await db
      .insertInto('form_submissions')
      .values({
        id: answer.id,
        form_id: form.id,
        workspace_id: form.workspace_id,
        fields: JSON.stringify(fields),
        page_url: pageUrlOf(input.page_url, referer),
        experiment_id: variant?.experimentId ?? null,
        variant_id: variant?.variantId ?? null,
        challenge: challengeDigest(input.proof!),
        created_at: answer.created_at,
      })
      .execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw refused('used');
    throw error;
  }
  return answer;
}
