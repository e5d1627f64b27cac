/**
 * The worker-host options a python-like instance (or auto-complete run) gets from its sandbox
 * parameters: one place, so an instance and the auto-complete of the same model are sandboxed alike.
 */
import path from 'node:path';
import type { WorkerInstanceOptions } from '@tritium/core/worker';
import type { SandboxParameters } from './parameters.ts';
import type { TranspiledModel } from './transpile.ts';

/**
 * Paths an isolated instance may read beyond the runtime's own (the host adds those, and drops
 * duplicates): the model's folder, its bundle, and the node_modules folders its packages live in (a
 * package's own dependencies sit there too).
 */
function readAllowlist(modelDir: string, bundle: TranspiledModel): string[] {
  const paths = new Set<string>([modelDir, bundle.file]);
  for (const file of bundle.externals) {
    const idx = file.lastIndexOf(`${path.sep}node_modules${path.sep}`);
    paths.add(idx >= 0 ? file.slice(0, idx + `${path.sep}node_modules`.length) : path.dirname(file));
  }
  return [...paths];
}

/** The server's values of the allow-listed names (`tritium.env`); unset names stay unset. */
function allowedEnv(names: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

type IsolationOptions = Pick<WorkerInstanceOptions<unknown>, 'isolation' | 'processPermissions' | 'execArgv' | 'env' | 'sandbox'>;

/** Isolation, permissions, environment and sandbox of a worker running `bundle` from `modelDir`. */
export function isolationOptions(p: SandboxParameters, modelDir: string, bundle: TranspiledModel): IsolationOptions {
  if (p.isolation !== 'process') return { isolation: 'thread' };
  return {
    isolation: 'process',
    processPermissions: { allowRead: readAllowlist(path.resolve(modelDir), bundle) },
    ...(p.allowAddons ? { execArgv: ['--allow-addons'] } : {}),
    env: allowedEnv(p.env),
    sandbox: { allowNetwork: p.allowNetwork, ...(p.memoryMb ? { memoryLimitMb: p.memoryMb } : {}) },
  };
}
