/**
 * What every worker-hosted instance takes from the server, whichever backend starts it: the model's
 * identity (its output lines and crash messages name model, version and instance), the server's
 * worker policy (`--model-log-rate`, `--strict-sandbox`) and the instance's lifecycle hooks. Each
 * backend spreads this into `spawnWorkerInstance`'s options, so no backend can leave a server rule out.
 */
import type { WorkerInstanceOptions } from '../worker/types.ts';
import type { InstanceSpec, LoadSpec } from './spi.ts';

export type InstanceWorkerOptions = Pick<
  WorkerInstanceOptions<unknown>,
  'model' | 'version' | 'instanceName' | 'log' | 'policy' | 'onUnavailable' | 'onAvailable' | 'signal'
>;

/** The options of `spawnWorkerInstance` that come from the load and the instance, not the backend. */
export function instanceWorkerOptions(load: Pick<LoadSpec, 'config' | 'version' | 'log' | 'workerPolicy'>, instance: InstanceSpec): InstanceWorkerOptions {
  return {
    model: load.config.name,
    version: load.version,
    instanceName: instance.name,
    log: load.log,
    ...(load.workerPolicy ? { policy: load.workerPolicy } : {}),
    ...instanceHooks(instance),
  };
}

/** The InstanceSpec hooks a worker-hosted instance hands `spawnWorkerInstance` (those the server set). */
function instanceHooks(instance: InstanceSpec): Pick<InstanceSpec, 'onUnavailable' | 'onAvailable' | 'signal'> {
  return {
    ...(instance.onUnavailable ? { onUnavailable: instance.onUnavailable } : {}),
    ...(instance.onAvailable ? { onAvailable: instance.onAvailable } : {}),
    ...(instance.signal ? { signal: instance.signal } : {}),
  };
}
