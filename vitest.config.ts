import { defineConfig } from 'vitest/config';

// One vitest run for the whole workspace, on the sources: the `@tritium/source` export condition
// points every @tritium/* import at src/*.ts (package.json `exports`). Workers and spawned CLIs run
// the compiled dist/ (vitest.build.ts runs `tsc -b` first). The json reporter feeds .ci/run's
// `N passed, N failed` line.
// Vite's server defaults less 'module': bundler-only builds published under it (the AWS SDK's dist-es,
// OpenTelemetry's ESM importing files without their extension) do not run on Node, which ignores it.
const conditions = ['@tritium/source', 'node', 'development|production'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    globalSetup: ['./vitest.build.ts'],
    include: ['{packages,apps,tools}/*/test/**/*.test.ts', 'bench/**/*.test.ts'],
    reporters: ['default', ['json', { outputFile: '.test-results/vitest.json' }]],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
