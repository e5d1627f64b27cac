/**
 * Runs INSIDE an instance's worker (thread or child process), bundled into each model's bundle
 * together with the model and the author API (one shared copy, plain JavaScript, no loader needed):
 * builds the `TritonPythonModel`, calls `initialize`, and serves `execute` (default and decoupled)
 * for the core worker host. The model sees only the author API; the worker holds no server objects,
 * only the plain `PythonLikeInit` and the host's BLS/log functions.
 */
import { InferError, type InferRequest } from '@tritium/core';
import {
  type WorkerContext,
  type WorkerExecuteContext,
  type WorkerModelInstance,
  type WorkerExecuteOutput,
} from '@tritium/core/worker';
import * as api from '../model-api/runtime-face.ts';
import type { InitializeArgs, TritonModel, TritonModelClass } from '../model-api/model.ts';
import { executeDecoupled, executeDecoupledAsOne } from './decoupled-execute.ts';
import type { PythonLikeInit } from './init.ts';
import { mapResults } from './map-results.ts';
import { hookError, plainResponse, runningModel, type RunningModel } from './running-model.ts';

function findModelClass(exports: Record<string, unknown>, init: PythonLikeInit): TritonModelClass {
  const candidate = exports['TritonPythonModel'] ?? exports['default'];
  const hint = `export default class TritonPythonModel { ... } or export class TritonPythonModel`;
  if (typeof candidate !== 'function') {
    throw new InferError('INVALID_ARG', `model '${init.modelName}': ${init.modelFile} must export class TritonPythonModel (${hint})`);
  }
  if (typeof (candidate.prototype as Partial<TritonModel> | undefined)?.execute !== 'function') {
    throw new InferError('INVALID_ARG', `model '${init.modelName}': class TritonPythonModel in ${init.modelFile} has no execute(requests) method`);
  }
  return candidate as TritonModelClass;
}

function initializeArgs(init: PythonLikeInit): InitializeArgs {
  return {
    model_config: init.configJson,
    model_instance_kind: init.instance.kind,
    model_instance_name: init.instance.name,
    model_instance_device_id: String(init.instance.device),
    model_repository: init.modelDir,
    model_version: String(init.version),
    model_name: init.modelName,
    modelConfig: init.config,
  };
}

/** The author API's link to the worker: BLS calls, logging and metrics go through the host's functions. */
function linkRuntime(init: PythonLikeInit, ctx: WorkerContext): void {
  api.setRuntimeLink({
    modelName: init.modelName,
    infer: (request) => ctx.infer(request),
    inferStream: (request, sink) => ctx.inferStream(request, sink),
    log: (level, message) => (level === 'verbose' ? ctx.log.verbose(1, message) : ctx.log[level](message)),
    metric: (op) => ctx.metric(op),
    metricValue: (op) => ctx.metricValue(op),
  });
}

/** A model that is not decoupled asked for its response sender. */
function noSender(modelName: string): () => never {
  return () => {
    throw new api.TritonError(
      `model '${modelName}' is not decoupled: the response sender needs model_transaction_policy { decoupled: true }; return responses from execute instead`,
      api.TritonError.UNSUPPORTED,
    );
  };
}

/** A model that is not decoupled: execute returns one InferenceResponse per request. */
async function executeBatch(run: RunningModel, batch: readonly InferRequest[], xctx: WorkerExecuteContext): Promise<WorkerExecuteOutput> {
  const { init, failPrefix } = run;
  const sender = noSender(init.modelName);
  const requests = batch.map((wire) =>
    api.incomingRequest({ wire, requestedOutputNames: run.requestedOf(wire), sender, isCancelled: () => xctx.signal.aborted }),
  );
  let returned: unknown;
  try {
    returned = await run.model.execute(requests);
  } catch (error) {
    throw hookError(error, failPrefix, init);
  }
  const list = Array.isArray(returned) ? returned : returned instanceof api.InferenceResponse ? [returned] : undefined;
  if (!list) {
    const type = returned === null || returned === undefined ? String(returned) : typeof returned;
    throw new InferError('INTERNAL', `${failPrefix}Expected a list of InferenceResponse in the execute return, found ${type}`);
  }
  const plain = list.map((value, index) => plainResponse(value, index, init.modelName));
  return mapResults(plain, batch, { config: init.config, version: init.version, requested: batch.map((r) => run.requestedOf(r)) });
}

/** Builds the instance from the model module's exports (called by `instance-entry.ts`). */
export async function createModelInstance(
  init: PythonLikeInit,
  ctx: WorkerContext,
  exports: Record<string, unknown>,
): Promise<WorkerModelInstance> {
  linkRuntime(init, ctx);
  const Model = findModelClass(exports, init);
  const decoupled = init.config.model_transaction_policy?.decoupled === true;
  let model: TritonModel;
  try {
    model = new Model();
    await model.initialize?.(initializeArgs(init));
  } catch (error) {
    throw hookError(error, `failed to initialize model '${init.modelName}' instance '${init.instance.name}': `, init);
  }
  const run = runningModel(init, model);
  const instance: WorkerModelInstance = {
    async execute(batch, xctx) {
      return decoupled ? { results: await executeDecoupledAsOne(run, batch, xctx) } : executeBatch(run, batch, xctx);
    },
    async dispose(): Promise<void> {
      await model.finalize?.();
    },
  };
  if (decoupled) instance.executeDecoupled = async (batch, sinks, xctx) => executeDecoupled(run, batch, sinks, xctx);
  if (typeof model.isReady === 'function') instance.isReady = () => model.isReady!();
  return instance;
}
