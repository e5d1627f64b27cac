/** `npm start` in this folder: the custom server with tritonserver's flags. */
// @tritium/server is an app that also exports its composition root for embedding; Nx forbids
// importing apps by default, and embedding it is exactly what this example shows.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { parseServeFlags } from '@tritium/server';
import { buildServer } from './server.ts';

const server = buildServer(parseServeFlags(process.argv.slice(2)));
await server.start();
const stop = () => void server.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
