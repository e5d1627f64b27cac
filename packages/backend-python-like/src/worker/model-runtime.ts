/**
 * Runs INSIDE an instance's worker (thread or child process), bundled into each model's bundle
 * together with the model and the author API (one shared copy, plain JavaScript, no loader needed):
 * builds the `TritonPythonModel`, calls `initialize`, and serves `execute` (default and decoupled)
 * for the core worker host. The model sees only the author API; the worker holds no server objects,
 * only the plain `PythonLikeInit` and the host's BLS/log functions.
 */
import {
  InferError,
  SEND_CANCELLED_MESSAGE,
  type ExecuteResult,
  type InferRequest,
  type InferResponse,
  type ResponseSink,
  type WorkerContext,
  type WorkerExecuteContext,
  type WorkerModelInstance,
  type WorkerExecuteOutput,
} from '@tritium/core';
import * as api from '../model-api/runtime-face.ts';
import type { InferenceResponse as AuthorResponse } from '../model-api/response.ts';
import type { InitializeArgs, TritonModel, TritonModelClass } from '../model-api/model.ts';
import { describeError } from './error-location.ts';
import type { PythonLikeInit } from './init.ts';
import { answerOne, mapResults, type PlainResponse } from './map-results.ts';

type WireRequest = Omit<InferRequest, 'signal'>;

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

/** An error from a hook as an InferError: a TritonError keeps its code and message; anything else is INTERNAL with its model.ts location. */
function hookError(error: unknown, prefix: string, init: PythonLikeInit): InferError {
  if (InferError.is(error)) return new InferError(error.code, error.message);
  return new InferError('INTERNAL', `${prefix}${describeError(error, init.modelDir)}`);
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

/** Builds the instance from the model module's exports (called by `instance-entry.ts`). */
export async function createModelInstance(
  init: PythonLikeInit,
  ctx: WorkerContext,
  exports: Record<string, unknown>,
): Promise<WorkerModelInstance> {
  api.setRuntimeLink({
    modelName: init.modelName,
    infer: (request) => ctx.infer(request),
    inferStream: (request, sink) => ctx.inferStream(request, sink),
    log: (level, message) => (level === 'verbose' ? ctx.log.verbose(1, message) : ctx.log[level](message)),
    metric: (op) => ctx.metric(op),
    metricValue: (op) => ctx.metricValue(op),
  });
  const Model = findModelClass(exports, init);
  const config = init.config;
  const allOutputs = config.output.map((o) => o.name);
  const decoupled = config.model_transaction_policy?.decoupled === true;
  let model: TritonModel;
  try {
    model = new Model();
    await model.initialize?.(initializeArgs(init));
  } catch (error) {
    throw hookError(error, `failed to initialize model '${init.modelName}' instance '${init.instance.name}': `, init);
  }

  const requestedOf = (r: WireRequest): string[] => (r.outputs && r.outputs.length > 0 ? r.outputs.map((o) => o.name) : allOutputs);
  const failPrefix = `Failed to process the request(s) for model instance '${init.instance.name}', message: `;

  /** Author response → plain data; a non-response is an INTERNAL error for the batch. */
  const plain = (value: unknown, index: number): PlainResponse => {
    if (!(value instanceof api.InferenceResponse)) {
      const type = value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value;
      throw new InferError(
        'INTERNAL',
        `model '${init.modelName}' execute returned ${type} at index ${index}; expected an InferenceResponse`,
      );
    }
    const error = value.error();
    return {
      ...(error ? { error: new InferError(error.code, error.message) } : {}),
      outputs: value.outputTensors().map((t) => t.toWire()),
      ...(Object.keys(value.parameters()).length > 0 ? { parameters: value.parameters() } : {}),
    };
  };

  /** Why a send fails once its request has ended: cancelled (the client left), or closed by an error. */
  const endedError = (cancelled: boolean): InferError =>
    cancelled
      ? new InferError('CANCELLED', SEND_CANCELLED_MESSAGE)
      : new InferError('INTERNAL', 'Unable to send response: the request has already ended.');

  /**
   * What `send()` returns: resolves once the response is on its way to the client (at once, unless
   * the client reads slower than the model sends); rejects with a TritonError when the request ended
   * first. Marked handled, so a model that does not await its sends never sees an unhandled rejection.
   */
  const authorPromise = (sent: Promise<void> | void): Promise<void> => {
    if (!sent) return Promise.resolve();
    const p = sent.then(undefined, (e: unknown) => {
      const error = InferError.from(e);
      throw new api.TritonError(error.message, error.code);
    });
    p.catch(() => undefined);
    return p;
  };

  const noSender = (): never => {
    throw new api.TritonError(
      `model '${init.modelName}' is not decoupled: the response sender needs model_transaction_policy { decoupled: true }; return responses from execute instead`,
      api.TritonError.UNSUPPORTED,
    );
  };

  const instance: WorkerModelInstance = {
    async execute(batch: readonly InferRequest[], xctx: WorkerExecuteContext): Promise<WorkerExecuteOutput> {
      if (decoupled) return { results: await executeDecoupledAsOne(batch, xctx) };
      const requests = batch.map((wire) =>
        api.incomingRequest({ wire, requestedOutputNames: requestedOf(wire), sender: noSender, isCancelled: () => xctx.signal.aborted }),
      );
      let returned: unknown;
      try {
        returned = await model.execute(requests);
      } catch (error) {
        throw hookError(error, failPrefix, init);
      }
      const list = Array.isArray(returned) ? returned : returned instanceof api.InferenceResponse ? [returned] : undefined;
      if (!list) {
        const type = returned === null || returned === undefined ? String(returned) : typeof returned;
        throw new InferError(
          'INTERNAL',
          `${failPrefix}Expected a list of InferenceResponse in the execute return, found ${type}`,
        );
      }
      return mapResults(list.map(plain), batch, { config, version: init.version, requested: batch.map(requestedOf) });
    },
    async dispose(): Promise<void> {
      await model.finalize?.();
    },
  };

  if (decoupled) {
    instance.executeDecoupled = async (batch, sinks, xctx) => executeDecoupled(batch, sinks, xctx);
  }

  /** A decoupled model asked for one response per request (a non-streaming call): exactly one response each. */
  async function executeDecoupledAsOne(batch: readonly InferRequest[], xctx: WorkerExecuteContext): Promise<ExecuteResult[]> {
    const collected = batch.map(() => ({ responses: [] as InferResponse[], error: undefined as InferError | undefined }));
    await executeDecoupled(
      batch,
      collected.map((c) => ({ response: (r: InferResponse) => void c.responses.push(r), complete: (e?: InferError) => void (c.error = e) })),
      xctx,
      true,
    );
    return collected.map(
      (c) =>
        c.error ??
        (c.responses.length === 1
          ? c.responses[0]!
          : new InferError(
              'INVALID_ARG',
              `model '${init.modelName}' is decoupled and sent ${c.responses.length} responses to a request that takes one; use a streaming request (ModelStreamInfer)`,
            )),
    );
  }

  /**
   * Runs the model's execute with a response sender per request. As in Triton, the instance is free
   * again once execute returns: a model may keep sending from a timer or a stream it started, and
   * the next batch runs meanwhile (a decoupled model that streams for seconds would otherwise serve
   * one batch at a time). `untilFinal` waits for every final flag instead (a call that collects
   * every response before it answers).
   */
  async function executeDecoupled(batch: readonly InferRequest[], sinks: readonly ResponseSink[], xctx: WorkerExecuteContext, untilFinal = false): Promise<void> {
    let open = batch.length;
    let allDone!: () => void;
    const finished = new Promise<void>((resolve) => (allDone = resolve));
    if (open === 0) allDone();
    const closed = batch.map(() => false);
    const finalSent = batch.map(() => false);
    const close = (i: number, error?: InferError): void => {
      if (closed[i]) return;
      closed[i] = true;
      sinks[i]!.complete(error);
      if (--open === 0) allDone();
    };
    const senders = batch.map((wire, i) => ({
      send(response?: AuthorResponse | null, flags = 0): Promise<void> {
        if (finalSent[i]) {
          throw new api.TritonError('Unable to send response. Response sender has been closed.', api.TritonError.INTERNAL);
        }
        let sent: Promise<void> | void = undefined;
        if (response !== undefined && response !== null) {
          if (closed[i]) sent = Promise.reject(endedError(xctx.signal.aborted));
          else {
            const result = answerOne(plain(response, 0), wire, requestedOf(wire), { config, version: init.version }, true);
            if (InferError.is(result)) close(i, result);
            else sent = sinks[i]!.response(result);
          }
        }
        if (flags & api.TRITONSERVER_RESPONSE_COMPLETE_FINAL) {
          finalSent[i] = true;
          close(i);
        }
        return authorPromise(sent);
      },
      isCancelled: () => xctx.signal.aborted,
    }));
    const requests = batch.map((wire, i) =>
      api.incomingRequest({ wire, requestedOutputNames: requestedOf(wire), sender: () => senders[i]!, isCancelled: () => xctx.signal.aborted }),
    );
    let failure: InferError | undefined;
    try {
      const returned = await model.execute(requests);
      if (returned !== undefined && returned !== null) {
        failure = new InferError(
          'INTERNAL',
          `Python model '${init.modelName}' is using the decoupled mode and the execute function must return None.`,
        );
      }
    } catch (error) {
      failure = hookError(error, failPrefix, init);
    }
    if (failure) batch.forEach((_, i) => close(i, failure));
    if (open === 0) return;
    // A request cancelled before its final flag ends here, whether or not the model ever sends the
    // flag (its sender then drops what it sends). The execute's signal outlives the call while any
    // of its requests is open (the worker runtime keeps it for executes that returned open).
    const endCancelled = (): void => batch.forEach((_, i) => close(i, new InferError('CANCELLED', 'request cancelled')));
    if (xctx.signal.aborted) endCancelled();
    else xctx.signal.addEventListener('abort', endCancelled, { once: true });
    if (untilFinal) await finished;
  }

  return instance;
}
