/**
 * How the worker host starts a worker: the compiled runtime and entry it runs (compiled-module.ts),
 * the paths a process-isolated child may read, the sandbox decided for the instance, and the
 * channel, a worker thread or a child process (channel.ts).
 */
import { isAbsolute, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InferError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { spawnProcess, spawnThread, type Channel, type ChannelHandlers } from './channel.ts';
import { compiledModule } from './compiled-module.ts';
import type { ModelOutput } from './model-output.ts';
import { dedupeReadPaths, readPathsFor } from './process-paths.ts';
import { describeUnenforced, prepareSandbox, type SandboxSpec } from './process-sandbox.ts';
import type { WorkerInstanceOptions } from './types.ts';

/** The module every worker starts from; it imports the entry named in `init`. */
const RUNTIME_SOURCE = new URL('./worker-runtime.ts', import.meta.url);

/** The compiled runtime and entry of an instance; `readPaths` what a process-isolated child may read. */
export interface WorkerModules {
  readonly runtime: URL;
  readonly entry: URL;
  readonly readPaths?: readonly string[];
}

type LaunchOptions = WorkerInstanceOptions<unknown>;

function entryUrl(entry: string | URL): URL {
  if (entry instanceof URL) return entry;
  if (entry.startsWith('file:')) return new URL(entry);
  return pathToFileURL(isAbsolute(entry) ? entry : resolvePath(entry));
}

/** Finds the compiled runtime and entry (INVALID_ARG naming the file to build when one is missing). */
export function workerModules(o: LaunchOptions, label: string): WorkerModules {
  let modules: WorkerModules;
  try {
    modules = { runtime: compiledModule(RUNTIME_SOURCE), entry: compiledModule(entryUrl(o.entry)) };
  } catch (error) {
    throw new InferError('INVALID_ARG', `${label}: worker entry: ${InferError.from(error).message}`);
  }
  if (o.isolation !== 'process') return modules;
  const readPaths = dedupeReadPaths([...readPathsFor(modules.runtime), ...readPathsFor(modules.entry), ...(o.processPermissions?.allowRead ?? [])]);
  return { ...modules, readPaths };
}

/**
 * The sandbox of an instance's child, decided on its first start; that start also logs, once,
 * each guarantee this host cannot give it, or, with `policy.strictSandbox`, fails naming them.
 */
export async function instanceSandbox(o: LaunchOptions, label: string, log: Logger, readPaths: readonly string[]): Promise<SandboxSpec> {
  const spec = await prepareSandbox({ ...o.sandbox, readPaths });
  if (spec.unenforced.length > 0) {
    const missing = `process isolation on this host does NOT enforce: ${describeUnenforced(spec)}`;
    if (o.policy?.strictSandbox) throw new InferError('UNSUPPORTED', `${label}: ${missing}; refused by --strict-sandbox`);
    log.warn(`${label}: ${missing}`);
  }
  return spec;
}

/** Spawns the worker: a child process under the sandbox with process isolation, else a worker thread. */
export function launchChannel(
  o: LaunchOptions,
  modules: WorkerModules,
  output: ModelOutput,
  sandbox: SandboxSpec | undefined,
  handlers: ChannelHandlers,
): Channel {
  if (o.isolation === 'process') {
    return spawnProcess(
      {
        script: modules.runtime,
        resourceLimits: o.resourceLimits,
        env: o.env,
        execArgv: o.execArgv,
        allowRead: modules.readPaths ?? [],
        output,
        sandbox,
      },
      handlers,
    );
  }
  return spawnThread({ script: modules.runtime, resourceLimits: o.resourceLimits, env: o.env, execArgv: o.execArgv, output }, handlers);
}
