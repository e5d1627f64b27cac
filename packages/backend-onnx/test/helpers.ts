/** Test helpers: a model folder in a temp dir with a generated model, loaded through the backend. */
import { captureLog } from '@tritium/core/testing';
export { captureLog, type CapturedLog } from '@tritium/core/testing';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  normalizeModelConfig,
  parseModelConfigText,
  type Backend,
  type InferRequest,
  type Logger,
  type ModelConfig,
  type ModelInstance,
  type Tensor,
} from '@tritium/core';
import { onnxBackend, type OnnxBackendOptions } from '../src/index.ts';

export class TempRepo {
  private constructor(readonly root: string) {}

  static async create(): Promise<TempRepo> {
    return new TempRepo(await mkdtemp(join(tmpdir(), 'tritium-onnx-')));
  }

  /** Writes `<root>/<name>/1/<file>` (when bytes given) and returns the model folder. */
  async model(name: string, bytes: Uint8Array | undefined, file = 'model.onnx'): Promise<{ modelDir: string; versionDir: string }> {
    const modelDir = join(this.root, name);
    const versionDir = join(modelDir, '1');
    await mkdir(versionDir, { recursive: true });
    if (bytes) await writeFile(join(versionDir, file), bytes);
    return { modelDir, versionDir };
  }

  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

export interface Loaded {
  readonly config: ModelConfig;
  /** Not usable when loaded with `instance: false`. */
  readonly instance: ModelInstance;
  dispose(): Promise<void>;
}

/** Parses + (auto-completes) + normalizes `configText`, loads the model and creates one instance. */
export async function loadModel(
  repo: TempRepo,
  name: string,
  bytes: Uint8Array | undefined,
  configText: string,
  options: { backend?: OnnxBackendOptions; log?: Logger; kind?: 'CPU' | 'GPU'; autoComplete?: boolean; instance?: boolean } = {},
): Promise<Loaded> {
  const backend: Backend = onnxBackend({ cores: 2, ...options.backend });
  const log = options.log ?? captureLog();
  const { modelDir, versionDir } = await repo.model(name, bytes);
  let config = parseModelConfigText(configText);
  config.name = name;
  if (options.autoComplete !== false) config = await backend.autoComplete!({ config, modelDir, versionDir, log });
  config = normalizeModelConfig({ ...config, backend: 'onnxruntime' }, { modelName: name });
  const model = await backend.loadModel({ config, version: 1, modelDir, versionDir, log });
  const instance =
    options.instance === false ? undefined : await model.createInstance({ name: `${name}_0`, kind: options.kind ?? 'CPU', device: 0, groupName: name });
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
export function request(model: string, inputs: Tensor[], outputs?: string[]): InferRequest {
  return { id: `r${nextId++}`, model, inputs, ...(outputs ? { outputs: outputs.map((name) => ({ name })) } : {}) };
}

export function signal(): AbortSignal {
  return new AbortController().signal;
}
