// The emails feature's public face for other features (more of it is still reached through
// accept.ts and objects.ts directly; see .dependency-cruiser-known-violations.json).
export { traceparentsOf } from './traces.ts';
