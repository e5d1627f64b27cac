#!/usr/bin/env node
// The `tritium` command: the compiled CLI (dist/, built by `npm run build` in a checkout).
const { main } = await import('../dist/cli/main.js').catch((error) => {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  process.stderr.write(`tritium: the CLI is not built (${error.message}); run \`npm run build\` in the repository first\n`);
  process.exit(1);
});
process.exitCode = await main(process.argv.slice(2));
