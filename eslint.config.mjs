// Lint enforces the dependency table of docs/architecture.md §1 through Nx tags: core stands alone, backends see only
// core, and inversify (DI) is allowed in apps/server alone.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const noDi = ['inversify', 'reflect-metadata'];
const transports = ['@grpc/*', 'protobufjs', 'express', 'fastify'];
// Object-store SDKs live in @tritium/repository-cloud, behind core's repository-source SPI.
const cloudSdks = ['@aws-sdk/*', '@azure/*', '@google-cloud/*', 'fauxqs', 'azurite'];
// Optional peer dependencies of @tritium/server, imported only on first use (apps/server/src/optional/).
const optionalPackages = ['@tritium/backend-onnx', '@tritium/backend-tensorrt', '@tritium/repository-cloud', '@tritium/cache-redis'];

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', '**/.generated/**', 'docs/**', '**/*.d.ts', '.nx/**', 'tmp/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts', '**/*.mjs'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@nx/enforce-module-boundaries': ['error', boundaries()],
    },
  },
  {
    // Tests import the server's optional packages statically, to exercise and compare with them;
    // the server itself only imports them lazily (docs/architecture.md §3, "Optional packages").
    files: ['**/test/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': ['error', boundaries({ checkDynamicDependenciesExceptions: optionalPackages })] },
  },
];

/** The dependency table as Nx rule options. */
function boundaries(extra = {}) {
  return {
    ...extra,
    allow: [],
    // Tests and example models import their own package by name, as its users do.
    allowCircularSelfDependency: true,
    enforceBuildableLibDependency: false,
    depConstraints: [
      {
        sourceTag: 'type:core',
        onlyDependOnLibsWithTags: ['type:core'],
        bannedExternalImports: [...noDi, ...transports, ...cloudSdks, 'onnxruntime-*', 'koffi', 'ioredis'],
      },
      {
        sourceTag: 'type:repository',
        onlyDependOnLibsWithTags: ['type:core'],
        bannedExternalImports: [...noDi, ...transports],
      },
      {
        sourceTag: 'type:cache',
        onlyDependOnLibsWithTags: ['type:core'],
        bannedExternalImports: [...noDi, ...transports, ...cloudSdks],
      },
      {
        sourceTag: 'type:backend',
        onlyDependOnLibsWithTags: ['type:core'],
        bannedExternalImports: [...noDi, ...transports],
      },
      { sourceTag: 'type:client', onlyDependOnLibsWithTags: [], bannedExternalImports: noDi },
      {
        sourceTag: 'type:tool',
        onlyDependOnLibsWithTags: ['type:client', 'type:core'],
        bannedExternalImports: noDi,
      },
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['*'] },
    ],
  };
}
