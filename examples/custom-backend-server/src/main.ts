/**
 * `npm start` in this folder: the custom server with tritonserver's flags, run as `tritium serve`
 * runs (a busy port or a bad flag is one line and an exit code, not a stack trace).
 */
// @tritium/server is an app that also exports its composition root for embedding; Nx forbids
// importing apps by default, and embedding it is exactly what this example shows.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { FlagError, parseServeFlags, runServer, type ServeOptions } from '@tritium/server';
import { buildServer } from './server.ts';

let options: ServeOptions;
try {
  options = parseServeFlags(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof FlagError)) throw e;
  process.stderr.write(`custom-backend-server: ${e.message}\n`);
  process.exit(2);
}
process.exitCode = await runServer(buildServer(options), options);
