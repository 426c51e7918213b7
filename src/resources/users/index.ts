// What other features use of users/: the session check of routes that a signed-in person
// reaches (the OAuth consent screen). sessions.ts imports service.ts, so this face re-exports
// the one function instead of service.ts growing a cycle.
export { requireSession } from './sessions.ts';
