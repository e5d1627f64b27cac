/**
 * Runs INSIDE an instance's worker (loaded by core's worker host): owns one onnxruntime
 * InferenceSession, whose `run()` blocks this thread and not the server's. Per execute: check each
 * request, group compatible ones, concatenate their inputs (core's `concatInputs`), run with only
 * the requested outputs, split rows back per request (core's `splitOutputs`).
 */
import * as ort from 'onnxruntime-node';
import {
  InferError,
  concatInputs,
  splitOutputs,
  requestSpecOf,
  validateRequest,
  type ExecuteResult,
  type ExecuteOutput,
  type InferRequest,
  type InferResponse,
  type RequestSpec,
  type Tensor,
} from '@tritium/core';
import type { WorkerContext, WorkerExecuteContext, WorkerModelInstance } from '@tritium/core';
import { fromOrtTensor, toOrtTensor } from './ort-convert.ts';
import { batchKey } from './batch-key.ts';
import { computeBatchInput, concatRagged } from './ragged.ts';
import type { OnnxInstanceInit, TensorPlan } from './plan.ts';

function now(): bigint {
  return process.hrtime.bigint();
}

class OnnxWorkerInstance implements WorkerModelInstance {
  private readonly inputPlans: Map<string, TensorPlan>;
  private readonly outputPlans: Map<string, TensorPlan>;
  private readonly requestSpec: RequestSpec;

  constructor(
    private readonly init: OnnxInstanceInit,
    private readonly session: ort.InferenceSession,
  ) {
    this.inputPlans = new Map(init.inputs.map((p) => [p.name, p]));
    this.outputPlans = new Map(init.outputs.map((p) => [p.name, p]));
    this.requestSpec = requestSpecOf(init.modelName, init.maxBatchSize, init.inputs, init.outputs);
  }

  async execute(batch: readonly InferRequest[], ctx: WorkerExecuteContext): Promise<ExecuteOutput> {
    const timings = { input: 0n, infer: 0n, output: 0n };
    const results: ExecuteResult[] = new Array(batch.length);
    const groups = new Map<string, { request: InferRequest; index: number; rows: number }[]>();
    const t0 = now();
    batch.forEach((request, index) => {
      try {
        const rows = validateRequest(this.requestSpec, request);
        // A model that cannot batch runs each request alone.
        const key = this.init.maxBatchSize > 0 ? batchKey(this.init, request) : `#${index}`;
        const group = groups.get(key) ?? [];
        group.push({ request, index, rows });
        groups.set(key, group);
      } catch (err) {
        results[index] = InferError.from(err, 'INVALID_ARG');
      }
    });
    timings.input += now() - t0;
    for (const group of groups.values()) {
      const requests = group.map((g) => g.request);
      let responses: readonly ExecuteResult[];
      if (ctx.signal.aborted) {
        responses = requests.map(() => new InferError('CANCELLED', `request for model '${this.init.modelName}' was cancelled`));
      } else {
        try {
          responses = await this.runGroup(requests, group.map((g) => g.rows), timings);
        } catch (err) {
          const error = InferError.from(err);
          responses = requests.map(() => error);
        }
      }
      group.forEach((g, k) => (results[g.index] = responses[k]!));
    }
    return {
      results,
      timings: { computeInputNs: Number(timings.input), computeInferNs: Number(timings.infer), computeOutputNs: Number(timings.output) },
    };
  }

  private async runGroup(requests: readonly InferRequest[], rows: readonly number[], timings: { input: bigint; infer: bigint; output: bigint }): Promise<InferResponse[]> {
    const { modelName: model, maxBatchSize } = this.init;
    const t0 = now();
    const feeds: Record<string, ort.Tensor> = {};
    const totalRows = rows.reduce((a, b) => a + b, 0);
    for (const name of requests[0]!.inputs.map((t) => t.name)) {
      const plan = this.inputPlans.get(name)!;
      if (plan.ragged && maxBatchSize > 0) {
        // Ragged: every request's elements, concatenated into one 1-D tensor.
        const ragged = concatRagged(requests, name);
        feeds[name] = toOrtTensor(ragged, ragged.shape, model);
        continue;
      }
      const tensor: Tensor = requests.length === 1 ? requests[0]!.inputs.find((t) => t.name === name)! : concatInputs(requests, name);
      const inner = plan.reshape ?? tensor.shape.slice(maxBatchSize > 0 ? 1 : 0);
      feeds[name] = toOrtTensor(tensor, maxBatchSize > 0 ? [totalRows, ...inner] : inner, model);
    }
    for (const batchInput of this.init.batchInputs) {
      const tensor = computeBatchInput(batchInput, requests, rows, model);
      feeds[batchInput.target] = toOrtTensor(tensor, tensor.shape, model);
    }
    // Only what some request asked for (all config outputs when one named none).
    const wanted = new Set<string>();
    for (const r of requests) {
      if (!r.outputs || r.outputs.length === 0) this.init.outputs.forEach((o) => wanted.add(o.name));
      else r.outputs.forEach((o) => wanted.add(o.name));
    }
    const fetches = this.init.outputs.map((o) => o.name).filter((n) => wanted.has(n));
    const t1 = now();
    timings.input += t1 - t0;
    let results: ort.InferenceSession.ReturnType;
    try {
      results = await this.session.run(feeds, fetches, this.init.run as ort.InferenceSession.RunOptions);
    } catch (err) {
      throw new InferError('INTERNAL', `onnx runtime error for model '${model}': ${(err as Error).message}`);
    }
    const t2 = now();
    timings.infer += t2 - t1;
    const outputs: Tensor[] = fetches.map((name) => {
      const value = results[name]!;
      const plan = this.outputPlans.get(name)!;
      // A reshaped output is returned in the config's shape.
      const shape = plan.reshape ? (maxBatchSize > 0 ? [totalRows, ...plan.dims] : [...plan.dims]) : value.dims;
      return fromOrtTensor(name, value, shape, model);
    });
    for (const value of Object.values(results)) value.dispose?.();
    let responses: InferResponse[];
    if (maxBatchSize > 0) {
      responses = splitOutputs(requests, outputs, { model, version: this.init.version, rows });
    } else {
      const r = requests[0]!;
      const mine = r.outputs && r.outputs.length > 0 ? new Set(r.outputs.map((o) => o.name)) : undefined;
      responses = [{ id: r.id, model, version: this.init.version, outputs: outputs.filter((o) => !mine || mine.has(o.name)) }];
    }
    timings.output += now() - t2;
    return responses;
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}

/** The worker entry point (core's worker host calls it on every (re)start). */
export async function createInstance(init: OnnxInstanceInit, ctx: WorkerContext): Promise<WorkerModelInstance> {
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(init.modelPath, init.session as ort.InferenceSession.SessionOptions);
  } catch (err) {
    throw new InferError(
      'INVALID_ARG',
      `failed to load model '${init.modelName}': onnxruntime cannot create a session from '${init.modelPath}': ${(err as Error).message}`,
    );
  }
  ctx.log.verbose(1, `model '${init.modelName}' instance '${ctx.instanceName}': onnxruntime session ready (${JSON.stringify(init.session.executionProviders)})`);
  return new OnnxWorkerInstance(init, session);
}
