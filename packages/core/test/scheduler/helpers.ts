/** In-thread fakes for scheduler unit tests: configs, requests, controllable instances. */
import type { ModelConfig, ModelInput, InferRequest, InferResponse } from '../../src/index.ts';
import type { ExecuteContext, ExecuteOutput, ExecuteResult, ExecuteTimings, ModelInstance } from '../../src/backend/index.ts';
import { InferError, tensorFromTyped, typedView } from '../../src/index.ts';

export function input(name: string, dims: number[], extra: Partial<ModelInput> = {}): ModelInput {
  return {
    name,
    data_type: 'TYPE_FP32',
    format: 'FORMAT_NONE',
    dims,
    is_shape_tensor: false,
    allow_ragged_batch: false,
    optional: false,
    is_non_linear_format_io: false,
    ...extra,
  };
}

export function config(partial: Partial<ModelConfig> = {}): ModelConfig {
  return {
    name: 'm',
    platform: '',
    backend: 'fake',
    runtime: '',
    max_batch_size: 8,
    input: [input('INPUT0', [-1])],
    output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1], label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false }],
    batch_input: [],
    batch_output: [],
    instance_group: [],
    default_model_filename: '',
    cc_model_filenames: {},
    metric_tags: {},
    parameters: {},
    model_warmup: [],
    ...partial,
  };
}

export function dynamicBatching(partial: Partial<NonNullable<ModelConfig['dynamic_batching']>> = {}): NonNullable<ModelConfig['dynamic_batching']> {
  return {
    preferred_batch_size: [],
    max_queue_delay_microseconds: 0,
    preserve_ordering: false,
    priority_levels: 0,
    default_priority_level: 0,
    priority_queue_policy: {},
    ...partial,
  };
}

let seq = 0;
/** A request with one FP32 input of shape [rows, cols] holding `value` everywhere. */
export function req(value: number, opts: { rows?: number; cols?: number; name?: string; model?: string } & Partial<InferRequest> = {}): InferRequest {
  const rows = opts.rows ?? 1;
  const cols = opts.cols ?? 2;
  const { rows: _r, cols: _c, name, ...rest } = opts;
  return {
    id: `r${seq++}`,
    model: opts.model ?? 'm',
    inputs: [tensorFromTyped(name ?? 'INPUT0', 'FP32', [rows, cols], new Float32Array(rows * cols).fill(value))],
    ...rest,
  };
}

/** First element of the response's first output. */
export function valueOf(r: InferResponse): number {
  return typedView(r.outputs[0]!)[0] as number;
}

/** Identity results: each request's inputs come back as outputs `OUTPUT<i>`. */
export function identity(batch: readonly InferRequest[], model = 'm'): InferResponse[] {
  return batch.map((r) => ({
    id: r.id,
    model,
    version: 1,
    outputs: r.inputs.map((t, i) => ({ ...t, name: `OUTPUT${i}` })),
  }));
}

export interface Call {
  readonly batch: readonly InferRequest[];
  readonly signal: AbortSignal;
  readonly context: ExecuteContext | undefined;
  /** True once resolved or rejected. */
  done: boolean;
  resolve(results?: readonly ExecuteResult[], timings?: ExecuteTimings): void;
  reject(error: unknown): void;
}

/** An instance whose executions complete only when the test says so. */
export function manualInstance(): ModelInstance & { calls: Call[]; busy: number } {
  const calls: Call[] = [];
  const inst = {
    calls,
    busy: 0,
    execute(batch: readonly InferRequest[], signal: AbortSignal, context?: ExecuteContext) {
      inst.busy++;
      return new Promise<ExecuteOutput>((resolve, reject) => {
        const call: Call = {
          batch,
          signal,
          context,
          done: false,
          resolve: (results, timings) => {
            if (call.done) return;
            call.done = true;
            inst.busy--;
            resolve({ results: results ?? identity(batch), ...(timings ? { timings } : {}) });
          },
          reject: (e) => {
            if (call.done) return;
            call.done = true;
            inst.busy--;
            reject(e);
          },
        };
        calls.push(call);
      });
    },
    dispose: () => Promise.resolve(),
  };
  return inst;
}

/** Executions of these instances not yet completed. */
export function openCalls(instances: readonly { calls: Call[] }[]): Call[] {
  return instances.flatMap((i) => i.calls.filter((c) => !c.done));
}

/** Completes every open execution with identity results. */
export function completeAll(instances: readonly { calls: Call[] }[]): void {
  for (const c of openCalls(instances)) c.resolve();
}

/** An instance answering identity after a microtask (optionally failing requests holding `poison`). */
export function autoInstance(opts: { poison?: number; onBatch?: (b: readonly InferRequest[]) => void } = {}): ModelInstance {
  return {
    async execute(batch) {
      opts.onBatch?.(batch);
      await Promise.resolve();
      return {
        results: batch.map((r, i) => {
          if (opts.poison !== undefined && (typedView(r.inputs[0]!) as Float32Array).includes(opts.poison)) {
            return new InferError('INTERNAL', `poisoned request ${r.id}`);
          }
          return identity(batch)[i]!;
        }),
      };
    },
    dispose: () => Promise.resolve(),
  };
}

/** Lets pending promise callbacks run. */
export async function flush(times = 5): Promise<void> {
  for (let i = 0; i < times; i++) await new Promise<void>((r) => setImmediate(r));
}

/** Records outcomes of promises without unhandled rejections. */
export function settle<T>(p: Promise<T>): { done: boolean; value?: T; error?: InferError } {
  const out: { done: boolean; value?: T; error?: InferError } = { done: false };
  p.then(
    (v) => {
      out.done = true;
      out.value = v;
    },
    (e: unknown) => {
      out.done = true;
      out.error = e as InferError;
    },
  );
  return out;
}
