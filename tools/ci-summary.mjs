// Prints the plain `N passed, N failed` line CI reads, from vitest's json report.
// A failed typecheck or lint (no report, non-zero exit) counts as one failure.
import { readFileSync, existsSync } from 'node:fs';

const [file, rcText] = process.argv.slice(2);
const rc = Number(rcText ?? 0);
let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(file)) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed = report.numPassedTests ?? 0;
  failed = (report.numFailedTests ?? 0) + (report.numFailedTestSuites ?? 0);
  skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
if (rc !== 0 && failed === 0) failed = 1;
// Skips go on a line of their own: the last line stays exactly `N passed, N failed`.
if (skipped) console.log(`${skipped} skipped`);
console.log(`${passed} passed, ${failed} failed`);
