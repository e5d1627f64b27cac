/**
 * Worker entry of the repeat backend (repeat_backend `ProcessRequest` / `ResponseThread`): for IN
 * of n elements, n responses, the e-th after waiting DELAY[e] ms, with OUT = [IN[e]] and IDX = [e],
 * then the final flag. The execute itself returns after WAIT ms, freeing the instance while the
 * responses keep coming (Triton's response factory outliving the request).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InferError, typedView, type InferRequest, type InferResponse, type ResponseSink, type Tensor } from '@tritium/core';
import { shapeToString } from '@tritium/core/backend';
import { type CreateWorkerInstance } from '@tritium/core/worker';
import type { RepeatInit } from './plan.ts';

function input(request: InferRequest, name: string): Tensor {
  const t = request.inputs.find((i) => i.name === name);
  if (!t) throw new InferError('INVALID_ARG', `expected input '${name}' in request`);
  return t;
}

function scalar(name: string, datatype: 'INT32' | 'UINT32', value: number): Tensor {
  const data = datatype === 'INT32' ? Int32Array.of(value) : Uint32Array.of(value);
  return { name, datatype, shape: [1], data: new Uint8Array(data.buffer) };
}

interface Planned {
  readonly waitMs: number;
  readonly values: Int32Array;
  readonly delays: Uint32Array;
}

/** Checks one request as ProcessRequest does; throws the error its single error response carries. */
function planRequest(request: InferRequest): Planned {
  const wait = input(request, 'WAIT');
  if (wait.data.byteLength !== 4) throw new InferError('INVALID_ARG', 'unexpected size for WAIT input');
  const waitMs = (typedView(wait) as Uint32Array)[0]!;
  const values = input(request, 'IN');
  const delays = input(request, 'DELAY');
  const same = values.shape.length === delays.shape.length && values.shape.every((d, i) => d === delays.shape[i]);
  if (!same) {
    throw new InferError('INVALID_ARG', `expected IN and DELAY shape to match, got ${shapeToString(values.shape)} and ${shapeToString(delays.shape)}`);
  }
  // Copies: the request's buffers are released when the execute returns.
  return { waitMs, values: Int32Array.from(typedView(values) as Int32Array), delays: Uint32Array.from(typedView(delays) as Uint32Array) };
}

function response(init: RepeatInit, request: InferRequest, value: number, index: number): InferResponse {
  return { id: request.id, model: init.model, version: init.version, outputs: [scalar('OUT', 'INT32', value), scalar('IDX', 'UINT32', index)] };
}

/** The response thread: one response per element after its delay, then the final flag. */
async function stream(init: RepeatInit, request: InferRequest, planned: Planned, sink: ResponseSink, signal: AbortSignal): Promise<void> {
  for (let e = 0; e < planned.values.length; e++) {
    try {
      await sleep(planned.delays[e]!, undefined, { signal });
    } catch {
      sink.complete(new InferError('CANCELLED', 'request cancelled'));
      return;
    }
    sink.response(response(init, request, planned.values[e]!, e));
  }
  sink.complete();
}

export const createInstance: CreateWorkerInstance<RepeatInit> = async (init) => ({
  async execute(batch) {
    // A model that is not decoupled can carry exactly one response per request.
    return {
      results: batch.map((request) => {
        try {
          const planned = planRequest(request);
          if (planned.values.length !== 1) {
            return new InferError(
              'INVALID_ARG',
              `model '${init.model}' would send ${planned.values.length} responses, but its model_transaction_policy is not decoupled`,
            );
          }
          return response(init, request, planned.values[0]!, 0);
        } catch (error) {
          return InferError.from(error);
        }
      }),
    };
  },
  async executeDecoupled(batch, sinks, { signal }) {
    if (batch.length > 1) throw new InferError('INVALID_ARG', 'repeat backend does not support batched request execution');
    let waitMs = 0;
    batch.forEach((request, i) => {
      let planned: Planned;
      try {
        planned = planRequest(request);
      } catch (error) {
        sinks[i]!.complete(InferError.from(error));
        return;
      }
      waitMs = planned.waitMs;
      void stream(init, request, planned, sinks[i]!, signal);
    });
    // Wait, then release: the instance is free again while responses are still being sent.
    if (waitMs > 0) await sleep(waitMs).catch(() => undefined);
  },
});
