// The part of domains/ that features below it use (API keys limited to one domain): it imports
// nothing of workspaces/, which service.ts does, so api-keys/ reaches it without a cycle.
export { findVerifiedDomainNames, findWorkspaceDomainId } from './lookup.ts';
