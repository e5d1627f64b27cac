/**
 * The worker entry that runs a model's static `autoCompleteConfig` in a sandboxed child process
 * (models under process isolation, and every model whose files were uploaded: importing the bundle
 * already runs the model's code). The completed config comes back as the one output of one execute,
 * JSON with 64-bit values that do not fit a double kept as `{"$bigint": "..."}`.
 */
import type { ModelConfig } from '@tritium/core';
import type { WorkerModelInstance } from '@tritium/core/worker';

export interface AutoCompleteInit {
  readonly bundleUrl: string;
  readonly config: ModelConfig;
}

type Bundle = {
  model: Record<string, unknown>;
  api: {
    AutoCompleteConfig: new (config: ModelConfig) => { asDict(): ModelConfig };
    TritonError: new (message: string, code: string) => Error;
  };
};

type ModelClass = ((...args: never[]) => unknown) & { autoCompleteConfig?: (config: unknown) => unknown };

/** Name of the execute's single output. */
export const AUTO_COMPLETE_OUTPUT = 'CONFIG';

export async function createInstance(init: AutoCompleteInit): Promise<WorkerModelInstance> {
  const { model, api } = (await import(init.bundleUrl)) as Bundle;
  const Model = (model['TritonPythonModel'] ?? model['default']) as ModelClass | undefined;
  let completed: ModelConfig | undefined;
  if (typeof Model === 'function' && typeof Model.autoCompleteConfig === 'function') {
    const returned = await Model.autoCompleteConfig(new api.AutoCompleteConfig(init.config));
    if (!(returned instanceof api.AutoCompleteConfig)) {
      throw new api.TritonError(`auto_complete_config function for model '${init.config.name}' must return the config it was given`, 'INVALID_ARG');
    }
    completed = returned.asDict();
  }
  const json = completed ? JSON.stringify(completed, (_k, v: unknown) => (typeof v === 'bigint' ? { $bigint: v.toString() } : v)) : '';
  const bytes = new TextEncoder().encode(json);
  return {
    async execute(batch) {
      return {
        results: batch.map((r) => ({
          id: r.id,
          model: init.config.name,
          version: 0,
          outputs: [{ name: AUTO_COMPLETE_OUTPUT, datatype: 'UINT8', shape: [bytes.byteLength], data: bytes.slice() }],
        })),
      };
    },
  };
}
