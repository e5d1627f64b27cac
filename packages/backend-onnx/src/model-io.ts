/**
 * Reads a model file's inputs and outputs (name, element type, dims with -1 for symbolic or unknown
 * sizes) from the ONNX protobuf, on the main thread and without a session: auto-complete and
 * load-time validation need the signature, and a corrupt file must fail with a clear message
 * rather than inside a worker.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { InferError, type ModelConfig } from '@tritium/core';

const { onnx } = onnxProto;

export interface IoInfo {
  readonly name: string;
  /** ONNX TensorProto.DataType number; 0 for a non-tensor value (sequence, map). */
  readonly onnxType: number;
  /** Dims; -1 where the model leaves the size symbolic or unknown. */
  readonly dims: readonly number[];
}

export interface ModelIo {
  readonly inputs: readonly IoInfo[];
  readonly outputs: readonly IoInfo[];
  /** Graph inputs that have an initializer (ORT's overridable initializers): optional inputs. */
  readonly overridableInitializers: readonly IoInfo[];
}

/** The default model file name of the ONNX backend. */
export const DEFAULT_MODEL_FILENAME = 'model.onnx';

/**
 * The model file for a version folder: `default_model_filename` (or `model.onnx`); a folder of that
 * name holds `model.onnx` (Triton's layout for models with external data). Throws UNAVAILABLE with
 * Triton's message when it does not exist.
 */
export async function resolveModelPath(config: Pick<ModelConfig, 'name' | 'default_model_filename'>, versionDir: string, instanceName?: string): Promise<string> {
  let path = join(versionDir, config.default_model_filename || DEFAULT_MODEL_FILENAME);
  const info = await stat(path).catch(() => undefined);
  if (info?.isDirectory()) {
    path = join(path, DEFAULT_MODEL_FILENAME);
  }
  const file = info?.isDirectory() ? await stat(path).catch(() => undefined) : info;
  if (!file?.isFile()) {
    throw new InferError('UNAVAILABLE', `unable to find '${path}' for model instance '${instanceName ?? config.name}'`);
  }
  return path;
}

function int64(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && 'toNumber' in value) return (value as { toNumber(): number }).toNumber();
  return Number(value);
}

function ioInfo(value: import('onnx-proto').onnx.IValueInfoProto): IoInfo {
  const tensor = value.type?.tensorType;
  const dims = (tensor?.shape?.dim ?? []).map((d) => {
    // A dim_param (symbolic) or an unset dim is variable: -1 as ORT reports it to Triton.
    if (d.dimParam || d.dimValue === undefined || d.dimValue === null) return -1;
    return int64(d.dimValue);
  });
  return { name: value.name ?? '', onnxType: tensor?.elemType ?? 0, dims };
}

/** Parses ONNX model bytes into its signature; throws INVALID_ARG naming the model and file when they are not a model. */
export function parseModelIo(bytes: Uint8Array, modelName: string, path: string): ModelIo {
  let graph: import('onnx-proto').onnx.IGraphProto | null | undefined;
  try {
    graph = onnx.ModelProto.decode(bytes).graph;
  } catch (err) {
    throw new InferError(
      'INVALID_ARG',
      `failed to load model '${modelName}': '${path}' is not a valid ONNX model (${(err as Error).message})`,
    );
  }
  if (!graph || (graph.output ?? []).length === 0) {
    throw new InferError('INVALID_ARG', `failed to load model '${modelName}': '${path}' is not a valid ONNX model (no graph outputs)`);
  }
  const initialized = new Set((graph.initializer ?? []).map((t) => t.name ?? ''));
  const inputs: IoInfo[] = [];
  const overridable: IoInfo[] = [];
  for (const v of graph.input ?? []) (initialized.has(v.name ?? '') ? overridable : inputs).push(ioInfo(v));
  return { inputs, outputs: (graph.output ?? []).map(ioInfo), overridableInitializers: overridable };
}

/** Reads and parses the model file at `path`. */
export async function readModelIo(path: string, modelName: string): Promise<ModelIo> {
  const bytes = await readFile(path).catch((err: NodeJS.ErrnoException) => {
    throw new InferError('UNAVAILABLE', `failed to load model '${modelName}': cannot read '${path}': ${err.message}`);
  });
  return parseModelIo(bytes, modelName, path);
}

export { shapeToString } from '@tritium/core/backend';
