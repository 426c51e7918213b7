// A command used wrongly: the CLI prints its message with the usage and exits with code 2.
// Its own module so that the commands can throw it without importing the CLI's entry.
export class UsageError extends Error {}
