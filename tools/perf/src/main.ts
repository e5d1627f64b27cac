import { parsePerfArgs, USAGE, UsageError } from './args.ts';
import { runPerf } from './run.ts';

/**
 * `tritium perf <perf_analyzer options>`: the command's entry point. Returns the exit code
 * (0 ok, 1 usage or run error), writing the report to stdout and errors to stderr.
 */
export async function perfMain(argv: readonly string[]): Promise<number> {
  let options;
  try {
    options = parsePerfArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`tritium perf: ${e.message}\n\n${USAGE}`);
      return 1;
    }
    throw e;
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    await runPerf(options, { write: (text) => process.stdout.write(text) });
    return 0;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    process.stderr.write(`tritium perf: ${e instanceof UsageError ? '' : 'error: '}${message}\n`);
    return 1;
  }
}
