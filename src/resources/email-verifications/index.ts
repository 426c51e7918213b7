// What other features use of email-verifications/: the verifier itself and the result's schema,
// for list verification (email-verification-lists/), which runs the same checks in bulk.
export { DomainFactsCache, verifyAddresses, type VerificationOutcome } from './verifier.ts';
export { EmailVerification } from './schemas.ts';
