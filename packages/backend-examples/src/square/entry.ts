/**
 * Worker entry of the square backend (square_backend `ProcessRequest` / `RequestThread`): for IN =
 * [n], n responses each OUT = [n] (shape: as many 1s as IN has dims), then the final flag. With the
 * CUSTOM_* parameters, the first n − fail − empty responses succeed, the next `fail` fail
 * (UNKNOWN `simulated failure`) and the last `empty` are not sent; a cancelled request stops with
 * CANCELLED `cancelled`. The execute returns at once; responses come from the request's own loop.
 *
 * One difference: Tritium's response sink ends a request at its first error, so a simulated
 * failure ends the stream there instead of being followed by more responses.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InferError, typedView, type InferRequest, type ResponseSink } from '@tritium/core';
import { type CreateWorkerInstance } from '@tritium/core/worker';
import type { SquareInit } from './plan.ts';

const nsToMs = (ns: number): number => ns / 1e6;

async function delay(ns: number): Promise<void> {
  if (ns > 0) await sleep(nsToMs(ns));
}

function resultOf(init: SquareInit, index: number, count: number): 'success' | 'fail' | 'empty' {
  const { failCount, emptyCount } = init.params;
  if (index + failCount + emptyCount < count) return 'success';
  if (index + emptyCount < count) return 'fail';
  return 'empty';
}

async function requestLoop(init: SquareInit, request: InferRequest, count: number, dims: number, sink: ResponseSink, signal: AbortSignal): Promise<void> {
  const shape = new Array<number>(dims).fill(1);
  for (let e = 0; e < count; e++) {
    if (signal.aborted) {
      await delay(init.params.cancelDelayNs);
      sink.complete(new InferError('CANCELLED', 'cancelled'));
      return;
    }
    await delay(init.params.inferDelayNs);
    const result = resultOf(init, e, count);
    if (result === 'fail') {
      sink.complete(new InferError('UNKNOWN', 'simulated failure'));
      return;
    }
    if (result === 'success') {
      sink.response({
        id: request.id,
        model: init.model,
        version: init.version,
        outputs: [{ name: 'OUT', datatype: 'INT32', shape, data: new Uint8Array(Int32Array.of(count).buffer) }],
      });
      await delay(init.params.outputDelayNs);
    }
    // Let other requests' loops and cancellations in between responses.
    if (e % 64 === 63) await sleep(0);
  }
  sink.complete();
}

export const createInstance: CreateWorkerInstance<SquareInit> = async (init) => ({
  async execute() {
    throw new InferError('UNSUPPORTED', `model '${init.model}': the square backend only runs decoupled (model_transaction_policy { decoupled: true })`);
  },
  async executeDecoupled(batch, sinks, { signal }) {
    batch.forEach((request, i) => {
      const sink = sinks[i]!;
      const input = request.inputs.find((t) => t.name === 'IN');
      if (!input || input.data.byteLength < 4) {
        sink.complete(new InferError('INVALID_ARG', "expected input 'IN' holding one INT32"));
        return;
      }
      if (input.shape.length === 2 && input.shape[0] !== 1) {
        sink.complete(new InferError('INVALID_ARG', 'unexpected shape for IN input'));
        return;
      }
      const count = (typedView(input) as Int32Array)[0]!;
      // Triton reads the count into a size_t: a negative one would mean billions of responses.
      if (count < 0) {
        sink.complete(new InferError('INVALID_ARG', `IN must not be negative, got ${count}`));
        return;
      }
      void requestLoop(init, request, count, input.shape.length, sink, signal);
    });
  },
});
