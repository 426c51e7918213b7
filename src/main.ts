// Process entry: `node src/main.ts <command>` (npm start runs `serve`).
import { runCli } from './cli/index.ts';

process.exitCode = await runCli(process.argv.slice(2));
