/**
 * Builds a test Backend whose instances run a given worker entry through the real worker host,
 * like Triton's QA backends: loadModel → BackendModel → createInstance = spawnWorkerInstance.
 */
import { BACKEND_API_VERSION, type Backend, type BackendModel, type LoadSpec, type ModelInstance } from '../backend/spi.ts';
import { spawnWorkerInstance } from '../worker/worker-host.ts';
import { instanceWorkerOptions } from '../backend/instance-worker.ts';
import type { WorkerInstanceOptions } from '../worker/types.ts';
import type { TestModelInit } from './entries/common.ts';

/** Worker-host options a test backend forwards to every instance it spawns. */
export type TestBackendOptions = Pick<
  WorkerInstanceOptions<TestModelInit>,
  'resourceLimits' | 'executeTimeoutMs' | 'executeWarnMs' | 'restart' | 'isolation' | 'processPermissions' | 'log' | 'startTimeoutMs'
>;

export function workerTestBackend(name: string, entry: URL, options: TestBackendOptions = {}): Backend {
  return {
    name,
    apiVersion: BACKEND_API_VERSION,
    async loadModel(spec: LoadSpec): Promise<BackendModel> {
      const init: TestModelInit = {
        model: spec.config.name,
        version: spec.version,
        inputs: spec.config.input.map((i) => i.name),
        outputs: spec.config.output.map((o) => o.name),
        parameters: Object.fromEntries(Object.entries(spec.config.parameters ?? {}).map(([k, v]) => [k, v.string_value ?? ''])),
      };
      const instances = new Set<ModelInstance>();
      return {
        async createInstance(instance) {
          const created = await spawnWorkerInstance<TestModelInit>({
            ...options,
            entry,
            init,
            ...instanceWorkerOptions(spec, instance),
            log: options.log ?? spec.log,
            infer: spec.infer,
          });
          instances.add(created);
          const dispose = created.dispose.bind(created);
          return Object.assign(created, {
            dispose: async () => {
              instances.delete(created);
              await dispose();
            },
          });
        },
        async dispose() {
          // Instances are normally disposed first; this only cleans up stragglers.
          await Promise.all([...instances].map((i) => i.dispose()));
        },
      };
    },
  };
}
