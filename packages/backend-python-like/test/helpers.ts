import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  InferError,
  silentLogger,
  type InferRequest,
  type InferResponse,
  type ModelConfig,
  type Parameters,
  type ResponseSink,
  type Tensor,
} from '@tritium/core';
import { type BackendModel, type ExecuteResult, type ModelInstance } from '@tritium/core/backend';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { pythonLikeBackend, type PythonLikeBackendOptions } from '../src/index.ts';

export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export async function fixtureConfig(name: string): Promise<ModelConfig> {
  const text = await readFile(path.join(FIXTURES, name, 'config.pbtxt'), 'utf8');
  return normalizeModelConfig(parseModelConfigText(text), { modelName: name });
}

export interface Loaded {
  readonly config: ModelConfig;
  readonly model: BackendModel;
  readonly instances: ModelInstance[];
  dispose(): Promise<void>;
}

/** Loads a fixture through the SPI (Backend → BackendModel → instances), as the repository would. */
export async function loadFixture(
  name: string,
  o: {
    version?: number;
    instances?: number;
    infer?: (r: InferRequest) => Promise<InferResponse>;
    inferStream?: (r: InferRequest, sink: ResponseSink) => void;
    backend?: PythonLikeBackendOptions;
  } = {},
): Promise<Loaded> {
  const config = await fixtureConfig(name);
  const version = o.version ?? 1;
  const modelDir = path.join(FIXTURES, name);
  const backend = pythonLikeBackend({ restart: { initialBackoffMs: 10 }, ...o.backend });
  const model = await backend.loadModel({
    config,
    version,
    modelDir,
    versionDir: path.join(modelDir, String(version)),
    log: silentLogger,
    ...(o.infer ? { infer: o.infer } : {}),
    ...(o.inferStream ? { inferStream: o.inferStream } : {}),
  });
  const instances: ModelInstance[] = [];
  try {
    for (let i = 0; i < (o.instances ?? 1); i++) {
      instances.push(await model.createInstance({ name: `${name}_0_${i}`, kind: 'CPU', device: 0, groupName: name }));
    }
  } catch (error) {
    await Promise.all(instances.map((x) => x.dispose()));
    await model.dispose();
    throw error;
  }
  return {
    config,
    model,
    instances,
    async dispose() {
      await Promise.all(instances.map((x) => x.dispose()));
      await model.dispose();
    },
  };
}

export function int32(name: string, values: number[], shape: number[] = [values.length, 1]): Tensor {
  const data = Int32Array.from(values);
  return { name, datatype: 'INT32', shape, data: new Uint8Array(data.buffer) };
}

export function fp32(name: string, values: number[], shape: number[] = [values.length]): Tensor {
  const data = Float32Array.from(values);
  return { name, datatype: 'FP32', shape, data: new Uint8Array(data.buffer) };
}

export function request(model: string, id: string, inputs: Tensor[], parameters?: Parameters, outputs?: string[]): InferRequest {
  return {
    id,
    model,
    inputs,
    ...(parameters ? { parameters } : {}),
    ...(outputs ? { outputs: outputs.map((n) => ({ name: n })) } : {}),
  };
}

export async function run(instance: ModelInstance, batch: InferRequest[]): Promise<readonly ExecuteResult[]> {
  return (await instance.execute(batch, new AbortController().signal)).results;
}

export function ok(result: ExecuteResult | undefined): InferResponse {
  if (!result || InferError.is(result)) throw new Error(`expected a response, got ${result ? `${result.code}: ${result.message}` : 'nothing'}`);
  return result;
}

export function asInt32(t: Tensor | undefined): number[] {
  if (!t) throw new Error('missing tensor');
  return Array.from(new Int32Array(t.data.slice().buffer));
}

export function asFloat32(t: Tensor | undefined): number[] {
  if (!t) throw new Error('missing tensor');
  return Array.from(new Float32Array(t.data.slice().buffer));
}
