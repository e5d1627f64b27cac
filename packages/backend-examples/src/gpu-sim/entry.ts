/**
 * Worker entry of the `gpu_sim` test double: one execution waits `launch_us + per_row_us × rows` on a
 * timer (the worker's CPU stays idle, as a host thread waiting on a GPU kernel does), then answers
 * every request with zero-filled outputs of its config shapes. Cancelling the batch ends the wait.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InferError, type InferRequest, type Tensor } from '@tritium/core';
import { type CreateWorkerInstance } from '@tritium/core/worker';
import type { GpuSimInit } from './plan.ts';

function rowsOf(init: GpuSimInit, request: InferRequest): number {
  return init.batching ? (request.inputs[0]?.shape[0] ?? 1) : 1;
}

export const createInstance: CreateWorkerInstance<GpuSimInit> = async (init) => ({
  async execute(batch, { signal }) {
    const rows = batch.reduce((n, r) => n + rowsOf(init, r), 0);
    try {
      await sleep((init.launchUs + init.perRowUs * rows) / 1000, undefined, { signal });
    } catch {
      return { results: batch.map(() => new InferError('CANCELLED', 'request cancelled')) };
    }
    return {
      results: batch.map((request) => {
        const n = rowsOf(init, request);
        const outputs: Tensor[] = init.outputs.map((o) => ({
          name: o.name,
          datatype: o.datatype,
          shape: init.batching ? [n, ...o.shape] : [...o.shape],
          data: new Uint8Array(o.rowBytes * (init.batching ? n : 1)),
        }));
        return { id: request.id, model: init.model, version: init.version, outputs };
      }),
    };
  },
});
