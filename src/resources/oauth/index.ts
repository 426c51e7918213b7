// What other features use of oauth/: the 401 challenge that points a client at the protected
// resource's metadata (the MCP server answers with it too).
export { bearerChallenge } from './routes.ts';
