/**
 * Packages `@tritium/server` loads only when something asks for them: a backend when a model needs
 * it, a repository provider when a `--model-repository` URL names it, the Redis cache when
 * `--cache-config redis` does. They are optional peer dependencies of `@tritium/server`, so a server
 * installs only what it serves. Loading one that is not installed fails what asked for it (that
 * model's load, that repository, that cache) with an error naming the package to install; nothing
 * else is affected. docs/architecture.md §3 ("Optional packages") is the rule every optional
 * package follows.
 */
import { InferError } from '@tritium/core';

/** The optional packages and what each one serves. */
export const OPTIONAL_PACKAGES = Object.freeze({
  onnx: '@tritium/backend-onnx',
  tensorrt: '@tritium/backend-tensorrt',
  cloud: '@tritium/repository-cloud',
  redis: '@tritium/cache-redis',
} as const);

/**
 * How to install a package, where a plain `npm install` is not enough: onnxruntime-node's install
 * script downloads CUDA libraries (which a CPU server does not use, and which fails without network
 * beyond the npm registry) unless told to skip (README "Install").
 */
const INSTALL_COMMANDS: Readonly<Record<string, string>> = Object.freeze({
  [OPTIONAL_PACKAGES.onnx]: `ONNXRUNTIME_NODE_INSTALL=skip npm install ${OPTIONAL_PACKAGES.onnx}`,
  'onnxruntime-node': 'ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node',
});

/** The command that installs `packageName` beside @tritium/server. */
export function installCommand(packageName: string): string {
  return INSTALL_COMMANDS[packageName] ?? `npm install ${packageName}`;
}

/** A load that needed a package that is not installed; `packageName` is the one to install. */
export class MissingPackageError extends InferError {
  constructor(
    readonly packageName: string,
    need: string,
  ) {
    super('INVALID_ARG', `${need} needs the package ${packageName}, which is not installed: install it beside @tritium/server (${installCommand(packageName)})`);
    this.name = 'MissingPackageError';
  }
}

/** The package a failed `import()` could not find (Node's ERR_MODULE_NOT_FOUND), or undefined. */
export function missingPackageOf(err: unknown): string | undefined {
  if ((err as NodeJS.ErrnoException | undefined)?.code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  return /Cannot find package '((?:@[^/']+\/)?[^/']+)/.exec(String((err as Error).message))?.[1];
}

/**
 * Runs `load` (an `import()` of `packageName`). When `packageName`, or a package it imports, is
 * not installed, throws a MissingPackageError naming that package and `need` (what asked for it).
 */
export async function importOptional<M>(packageName: string, need: string, load: () => Promise<M>): Promise<M> {
  try {
    return await load();
  } catch (err) {
    const missing = missingPackageOf(err);
    if (missing !== undefined) throw new MissingPackageError(missing, need);
    throw err;
  }
}

/** Memoizes one optional import: concurrent and later callers share it; a failure is retried next time. */
export function lazyImport<M>(packageName: string, need: string, load: () => Promise<M>): () => Promise<M> {
  let pending: Promise<M> | undefined;
  return () => {
    pending ??= importOptional(packageName, need, load).catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
