/**
 * A backend's model loaded the way the server loads it (config parsed, auto-completed, normalized;
 * version 1 from the given folders) with one instance, for backend tests; and the small request
 * helpers those tests share.
 */
import type { Backend, ModelInstance } from '../backend/spi.ts';
import { normalizeModelConfig } from '../config/normalize.ts';
import type { ModelConfig } from '../config/model-config.ts';
import { parseModelConfigText } from '../config/pbtxt-parser.ts';
import type { Logger } from '../logger.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { InferRequest } from '../types.ts';
import { captureLog } from './capture-log.ts';

export interface LoadedTestInstance {
  readonly config: ModelConfig;
  /** Not usable when loaded with `instance: false`. */
  readonly instance: ModelInstance;
  dispose(): Promise<void>;
}

export interface LoadTestInstanceOptions {
  /** The config's `backend` field (the name the server would route by). */
  readonly backendName: string;
  readonly modelDir: string;
  readonly versionDir: string;
  readonly log?: Logger;
  /** Skip the backend's auto-complete (default: run it). */
  readonly autoComplete?: boolean;
  /** `false`: load only; otherwise the instance to create (default: the first group's first, CPU). */
  readonly instance?: false | { readonly name: string; readonly groupName: string; readonly kind?: 'CPU' | 'GPU' };
}

export async function loadTestInstance(backend: Backend, name: string, configText: string, o: LoadTestInstanceOptions): Promise<LoadedTestInstance> {
  const log = o.log ?? captureLog();
  const { modelDir, versionDir } = o;
  let config = parseModelConfigText(configText);
  config.name = name;
  if (o.autoComplete !== false) config = await backend.autoComplete!({ config, modelDir, versionDir, log });
  config = normalizeModelConfig({ ...config, backend: o.backendName }, { modelName: name });
  const model = await backend.loadModel({ config, version: 1, modelDir, versionDir, log });
  let instance: ModelInstance | undefined;
  if (o.instance !== false) {
    const group = config.instance_group[0]!;
    const which = o.instance ?? { name: `${group.name}_0`, groupName: group.name };
    instance = await model.createInstance({ name: which.name, kind: which.kind ?? 'CPU', device: 0, groupName: which.groupName });
  }
  return {
    config,
    instance: instance!,
    async dispose() {
      await instance?.dispose();
      await model.dispose();
    },
  };
}

let nextId = 0;
/** A request to `model` with these inputs, asking for `outputs` when given (ids r0, r1, ...). */
export function testRequest(model: string, inputs: Tensor[], outputs?: string[]): InferRequest {
  return { id: `r${nextId++}`, model, inputs, ...(outputs ? { outputs: outputs.map((name) => ({ name })) } : {}) };
}

/** A signal that is never aborted. */
export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
