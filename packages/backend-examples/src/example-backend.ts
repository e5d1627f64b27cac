/**
 * The frame the three example backends share, shaped like Triton's C backends: `loadModel` is
 * TRITONBACKEND_ModelInitialize (the backend's own config checks, with its messages, fail the load),
 * `createInstance` is TRITONBACKEND_ModelInstanceInitialize (one worker per instance, through core's
 * worker host, so even these toy models never compute on the server's event loop).
 */
import {
  BACKEND_API_VERSION,
  instanceWorkerOptions,
  type Backend,
  type BackendModel,
  type InstanceSpec,
  type LoadSpec,
  type ModelInstance,
} from '@tritium/core/backend';
import { spawnWorkerInstance, type WorkerRestartPolicy } from '@tritium/core/worker';

/** Options every example backend takes. */
export interface ExampleBackendOptions {
  /** An execute running longer is killed with its worker (its requests fail, the instance restarts). Default none. */
  readonly executeTimeoutMs?: number;
  /** Crash-restart policy of the instances' workers. */
  readonly restart?: WorkerRestartPolicy;
}

/** What a backend's ModelInitialize produces from the config: its instances' init (or throws INVALID_ARG). */
export interface ExampleModelPlan<Init> {
  readonly init: Init;
  /** Runs once per model before any instance (Triton's identity `creation_delay_sec`). */
  readonly beforeInstances?: () => Promise<void>;
}

export interface ExampleBackendSpec<Init> {
  readonly name: string;
  /** Source name of the worker entry (`new URL('./x-entry.ts', import.meta.url)`). */
  readonly entry: URL;
  /** The backend's ModelInitialize checks; throws InferError INVALID_ARG with the backend's message. */
  plan(spec: LoadSpec): ExampleModelPlan<Init>;
  /** Per-instance init (e.g. the instance's index for Triton's `instance_wise_delay_multiplier`). */
  instanceInit?(init: Init, instanceIndex: number): Init;
}

export function exampleBackend<Init>(spec: ExampleBackendSpec<Init>, options: ExampleBackendOptions = {}): Backend {
  return {
    name: spec.name,
    apiVersion: BACKEND_API_VERSION,
    // Triton's example backends declare parallel instance loading (thread-safe initialization).
    parallelInstanceLoading: true,
    async loadModel(load: LoadSpec): Promise<BackendModel> {
      const plan = spec.plan(load);
      // A model the server's ceilings bound (uploaded) gets their execute timeout when the backend sets none.
      const executeTimeoutMs = options.executeTimeoutMs ?? load.limits?.executeTimeoutMs;
      await plan.beforeInstances?.();
      let created = 0;
      const live = new Set<ModelInstance>();
      return {
        async createInstance(instance: InstanceSpec): Promise<ModelInstance> {
          const index = created++;
          if (instance.kind === 'GPU') {
            load.log.info(`model '${load.config.name}' instance '${instance.name}': the ${spec.name} backend runs on CPU (no GPU work to do)`);
          }
          const worker = await spawnWorkerInstance({
            entry: spec.entry,
            init: spec.instanceInit ? spec.instanceInit(plan.init, index) : plan.init,
            ...instanceWorkerOptions(load, instance),
            ...(executeTimeoutMs ? { executeTimeoutMs } : {}),
            ...(options.restart ? { restart: options.restart } : {}),
          });
          live.add(worker);
          const dispose = worker.dispose.bind(worker);
          return Object.assign(worker, {
            dispose: async () => {
              live.delete(worker);
              await dispose();
            },
          });
        },
        async dispose() {
          // Core disposes instances first; this only releases stragglers of a failed load.
          await Promise.all([...live].map((i) => i.dispose()));
        },
      };
    },
  };
}
