// Prints the plain `N passed, N failed` line CI reads, from vitest's json report.
// A failed typecheck or lint (no report, non-zero exit) counts as one failure.
import { readFileSync, existsSync } from 'node:fs';

// Arguments: <report> <exit code>, once per run (.ci/run: the suite, then the cross-version set).
const args = process.argv.slice(2);
let passed = 0;
let failed = 0;
let skipped = 0;
for (let i = 0; i < args.length; i += 2) {
  const [file, rc] = [args[i], Number(args[i + 1] ?? 0)];
  let runFailed = 0;
  if (existsSync(file)) {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    passed += report.numPassedTests ?? 0;
    runFailed = (report.numFailedTests ?? 0) + (report.numFailedTestSuites ?? 0);
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  }
  failed += rc !== 0 && runFailed === 0 ? 1 : runFailed;
}
// Skips go on a line of their own: the last line stays exactly `N passed, N failed`.
if (skipped) console.log(`${skipped} skipped`);
console.log(`${passed} passed, ${failed} failed`);
