/**
 * Runs INSIDE an instance's worker (core's worker host; a child process by default): owns one
 * deserialized engine and one execution context (its CUDA stream, device buffers and pinned
 * staging buffers live in the shim). Per execute (core's `executeInGroups`): check each request,
 * group requests with the same non-batch shapes, cut groups to the profile's max batch, concatenate
 * inputs (core's `concatInputs`), set shapes, copy in, enqueue, synchronize, copy out, split rows
 * back per request.
 */
import { readFileSync } from 'node:fs';
import { InferError, type InferRequest, type InferResponse, type Tensor } from '@tritium/core';
import {
  answersOfRun,
  concatInputs,
  executeInGroups,
  outputsToFetch,
  requestSpecOf,
  type ExecuteOutput,
  type RunMember,
  type RunTimings,
  type RequestSpec,
} from '@tritium/core/backend';
import { DATA_TYPE_SIZE } from '@tritium/core/tensor';
import type { WorkerContext, WorkerExecuteContext, WorkerModelInstance } from '@tritium/core/worker';
import { TrtCallError, TrtShim, TrtStatus, type TrtContext, type TrtEngine } from './binding.ts';
import { batchKey, checkRequest, engineShape } from './request-check.ts';
import type { TensorPlan, TrtInstanceInit } from './plan.ts';

const now = (): bigint => process.hrtime.bigint();

class TrtWorkerInstance implements WorkerModelInstance {
  private readonly inputPlans: Map<string, TensorPlan>;
  /** Most rows one run may carry (the profile's smallest max dim 0 over the inputs). */
  private readonly maxRows: number;
  private readonly requestSpec: RequestSpec;

  constructor(
    private readonly init: TrtInstanceInit,
    private readonly instanceName: string,
    private readonly engine: TrtEngine,
    private readonly context: TrtContext,
  ) {
    this.inputPlans = new Map(init.inputs.map((p) => [p.name, p]));
    const limits = init.inputs.map((p) => p.max?.[0] ?? Number.MAX_SAFE_INTEGER);
    this.maxRows = init.maxBatchSize > 0 ? Math.min(init.maxBatchSize, ...limits) : 1;
    this.requestSpec = requestSpecOf(init.modelName, init.maxBatchSize, init.inputs, init.outputs);
  }

  execute(batch: readonly InferRequest[], ctx: WorkerExecuteContext): Promise<ExecuteOutput> {
    return executeInGroups(batch, {
      model: this.init.modelName,
      batching: this.init.maxBatchSize > 0,
      maxRows: this.maxRows,
      signal: ctx.signal,
      check: (request) => checkRequest(this.init, this.requestSpec, this.instanceName, request),
      key: (request) => batchKey(request),
      run: (members, timings) => this.run(members, timings),
      runError: (err) => this.toInferError(err),
    });
  }

  private toInferError(err: unknown): InferError {
    if (InferError.is(err)) return err as InferError;
    if (err instanceof TrtCallError) {
      const code = err.status === TrtStatus.SHAPE || err.status === TrtStatus.INVALID ? 'INVALID_ARG' : 'INTERNAL';
      return new InferError(code, `TensorRT error for model '${this.init.modelName}' instance '${this.instanceName}': ${err.message}`);
    }
    return InferError.from(err);
  }

  private run(members: readonly RunMember[], timings: RunTimings): InferResponse[] {
    const { modelName: model, maxBatchSize, version } = this.init;
    const requests = members.map((m) => m.request);
    const totalRows = members.reduce((a, m) => a + m.rows, 0);
    const t0 = now();
    for (const plan of this.init.inputs) {
      const tensor: Tensor = requests.length === 1 ? requests[0]!.inputs.find((t) => t.name === plan.name)! : concatInputs(requests, plan.name);
      this.context.setInputShape(plan.name, engineShape(this.init, plan, tensor.shape, totalRows));
      this.context.writeInput(plan.name, tensor.data);
    }
    const fetches = outputsToFetch(members, this.init.outputs);
    const shapes = fetches.map((o) => this.context.tensorShape(o.name));
    const t1 = now();
    timings.input += t1 - t0;
    this.context.enqueue();
    this.context.synchronize();
    const t2 = now();
    timings.infer += t2 - t1;
    const outputs: Tensor[] = fetches.map((plan, i) => {
      const shape = shapes[i]!;
      const data = new Uint8Array(shape.reduce((a, b) => a * b, 1) * DATA_TYPE_SIZE[plan.datatype]);
      this.context.readOutput(plan.name, data);
      // A reshaped output is returned in the config's shape.
      const reported = plan.reshape ? (maxBatchSize > 0 ? [totalRows, ...plan.dims] : [...plan.dims]) : shape;
      return { name: plan.name, datatype: plan.datatype, shape: reported, data };
    });
    const responses = answersOfRun(members, outputs, { model, version, batching: maxBatchSize > 0 });
    timings.output += now() - t2;
    return responses;
  }

  async dispose(): Promise<void> {
    this.context.destroy();
    this.engine.destroy();
  }
}

/** The worker entry point (core's worker host calls it on every (re)start). */
export async function createInstance(init: TrtInstanceInit, ctx: WorkerContext): Promise<WorkerModelInstance> {
  const shim = TrtShim.load(init.shimPath);
  let engine: TrtEngine;
  let context: TrtContext;
  try {
    engine = shim.deserialize(readFileSync(init.enginePath), init.device);
  } catch (err) {
    throw new InferError('INVALID_ARG', `unable to load model '${init.modelName}': cannot deserialize TensorRT engine '${init.enginePath}': ${(err as Error).message}`);
  }
  try {
    context = engine.createContext(init.profile);
  } catch (err) {
    engine.destroy();
    throw new InferError('INTERNAL', `unable to load model '${init.modelName}': cannot create an execution context: ${(err as Error).message}`);
  }
  ctx.log.verbose(1, `model '${init.modelName}' instance '${ctx.instanceName}': TensorRT engine ready (${shim.implementation}, device ${init.device}, profile ${init.profile})`);
  return new TrtWorkerInstance(init, ctx.instanceName, engine, context);
}
