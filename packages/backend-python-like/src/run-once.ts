import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { InferError, logLines, typedView, type InferResponse, type Logger, type Tensor } from '@tritium/core';
import { executeDecoupledToEnd, type ModelInstance } from '@tritium/core/backend';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { decodeBytesElements } from '@tritium/core/tensor';
import { pythonLikeBackend } from './backend.ts';
import { tensorFromJson, type JsonTensorValue } from './json-input.ts';

export interface RunOnceOptions {
  /** The model's folder (holds config.pbtxt and version folders). */
  readonly modelDir: string;
  /** Version to run; default the highest numbered folder. */
  readonly version?: number;
  /** Input name → JSON value (nested array or `{shape, data}`). */
  readonly inputs: Readonly<Record<string, JsonTensorValue>>;
  /** Outputs to return (default all). */
  readonly outputs?: readonly string[];
  readonly log?: Logger;
}

/** An output as `tritium model run` prints it (KServe v2 JSON style: flat `data`). */
export interface JsonOutput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly data: unknown[];
}

export interface RunOnceResult {
  readonly model: string;
  readonly version: number;
  /** One entry per response (decoupled models may send several, or none). */
  readonly responses: { readonly outputs: JsonOutput[]; readonly parameters?: Readonly<Record<string, unknown>> }[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Tensor → JSON: numbers (64-bit beyond 2^53 as strings), BYTES as UTF-8 strings (else byte arrays), BOOL as booleans. */
export function tensorToJson(t: Tensor): JsonOutput {
  let data: unknown[];
  if (t.datatype === 'BYTES') {
    data = decodeBytesElements(t.data, t.name).map((b) => {
      try {
        return utf8.decode(b);
      } catch {
        return Array.from(b);
      }
    });
  } else if (t.datatype === 'BOOL') {
    data = Array.from(t.data, (v) => v !== 0);
  } else {
    data = Array.from(typedView(t) as ArrayLike<number | bigint>, (v) =>
      typeof v === 'bigint' ? (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()) : v,
    );
  }
  return { name: t.name, datatype: t.datatype, shape: [...t.shape], data };
}

async function highestVersion(modelDir: string): Promise<number> {
  const names = await readdir(modelDir, { withFileTypes: true }).catch(() => {
    throw new InferError('NOT_FOUND', `model folder ${modelDir} not found`);
  });
  const versions = names.filter((d) => d.isDirectory() && /^\d+$/.test(d.name)).map((d) => Number(d.name));
  if (versions.length === 0) throw new InferError('NOT_FOUND', `no version folders (1/, 2/, ...) in ${modelDir}`);
  return Math.max(...versions);
}

/**
 * Runs a python-like model once without a server: loads it in one worker, calls `initialize`, one
 * `execute` with a single request built from JSON inputs, then `finalize`. BLS calls fail
 * UNSUPPORTED (there is no server to route them).
 */
export async function runModelOnce(o: RunOnceOptions): Promise<RunOnceResult> {
  const modelDir = path.resolve(o.modelDir);
  const configFile = path.join(modelDir, 'config.pbtxt');
  const text = await readFile(configFile, 'utf8').catch(() => {
    throw new InferError('NOT_FOUND', `no config.pbtxt in ${modelDir}`);
  });
  const config = normalizeModelConfig(parseModelConfigText(text, { file: configFile }), { modelName: path.basename(modelDir) });
  const version = o.version ?? (await highestVersion(modelDir));
  const stderr = (prefix: string, m: string): void => void process.stderr.write(logLines(m).map((l) => `${prefix}${l}\n`).join(''));
  const log: Logger = o.log ?? {
    error: (m) => stderr('E ', m),
    warn: (m) => stderr('W ', m),
    info: (m) => stderr('I ', m),
    verbose: () => {},
  };
  const inputs = Object.entries(o.inputs).map(([name, value]) => tensorFromJson(config, name, value));
  const request = {
    id: 'run',
    model: config.name,
    version,
    inputs,
    ...(o.outputs && o.outputs.length > 0 ? { outputs: o.outputs.map((name) => ({ name })) } : {}),
  };
  const backend = pythonLikeBackend({ restart: { maxRestarts: 0, keepTrying: false } });
  const model = await backend.loadModel({ config, version, modelDir, versionDir: path.join(modelDir, String(version)), log });
  let instance: ModelInstance | undefined;
  try {
    instance = await model.createInstance({ name: `${config.name}_0_0`, kind: 'CPU', device: 0, groupName: `${config.name}_0` });
    const responses: InferResponse[] = [];
    const signal = new AbortController().signal;
    if (config.model_transaction_policy?.decoupled && instance.executeDecoupled) {
      let failure: InferError | undefined;
      await executeDecoupledToEnd(instance, [request], [{ response: (r) => void responses.push(r), complete: (e) => (failure = e) }], signal);
      if (failure) throw failure;
    } else {
      const [result] = (await instance.execute([request], signal)).results;
      if (!result) throw new InferError('INTERNAL', 'execute returned no result');
      if (InferError.is(result)) throw result;
      responses.push(result);
    }
    return {
      model: config.name,
      version,
      responses: responses.map((r) => ({ outputs: r.outputs.map(tensorToJson), ...(r.parameters ? { parameters: r.parameters } : {}) })),
    };
  } finally {
    await instance?.dispose();
    await model.dispose();
  }
}
