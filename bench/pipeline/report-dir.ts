import { join } from 'node:path';

/**
 * Where `npm run bench` writes its report (benchmarks.md, benchmarks.svg): the tracked docs/ only
 * when asked with `--write-docs`, else tmp/bench-report/ (git-ignored), so a run never dirties the
 * checkout. Any other argument is refused, so a typo does not silently skip docs/.
 */
export function reportDir(args: readonly string[], repo: string): string {
  const unknown = args.filter((a) => a !== '--write-docs');
  if (unknown.length > 0) throw new Error(`unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((a) => `'${a}'`).join(', ')} (valid: --write-docs)`);
  return args.includes('--write-docs') ? join(repo, 'docs') : join(repo, 'tmp', 'bench-report');
}
