import { defineConfig } from 'vitest/config';

// One vitest run for the whole workspace. The json reporter feeds .ci/run's `N passed, N failed` line.
export default defineConfig({
  test: {
    include: ['{packages,apps,tools}/*/test/**/*.test.ts', 'bench/**/*.test.ts'],
    reporters: ['default', ['json', { outputFile: '.test-results/vitest.json' }]],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
