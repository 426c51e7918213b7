// Moved to src/dev/ (the demo uses it too); re-exported unchanged for the tests.
export * from '../../src/dev/dns-server.ts';
