/**
 * Runs INSIDE an instance's worker (loaded by core's worker host): owns one onnxruntime
 * InferenceSession, whose `run()` blocks this thread and not the server's. Per execute (core's
 * `executeInGroups`): check each request, group compatible ones, concatenate their inputs (core's
 * `concatInputs`), run with only the requested outputs, split rows back per request.
 */
import * as ort from 'onnxruntime-node';
import { InferError, type InferRequest, type InferResponse, type Tensor } from '@tritium/core';
import {
  answersOfRun,
  concatInputs,
  executeInGroups,
  outputsToFetch,
  requestSpecOf,
  validateRequest,
  type ExecuteOutput,
  type RunMember,
  type RunTimings,
  type RequestSpec,
} from '@tritium/core/backend';
import type { WorkerContext, WorkerExecuteContext, WorkerModelInstance } from '@tritium/core/worker';
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

  execute(batch: readonly InferRequest[], ctx: WorkerExecuteContext): Promise<ExecuteOutput> {
    return executeInGroups(batch, {
      model: this.init.modelName,
      batching: this.init.maxBatchSize > 0,
      signal: ctx.signal,
      check: (request) => validateRequest(this.requestSpec, request),
      key: (request) => batchKey(this.init, request),
      run: (members, timings) => this.run(members, timings),
    });
  }

  private async run(members: readonly RunMember[], timings: RunTimings): Promise<InferResponse[]> {
    const requests = members.map((m) => m.request);
    const rows = members.map((m) => m.rows);
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
    const fetches = outputsToFetch(members, this.init.outputs).map((o) => o.name);
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
    const responses = answersOfRun(members, outputs, { model, version: this.init.version, batching: maxBatchSize > 0 });
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
