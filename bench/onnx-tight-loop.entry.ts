/**
 * Worker entry for bench/onnx.bench.ts: the baseline. One onnxruntime session (same options as the
 * backend's instance) runs a fixed batch in a tight loop for `durationMs` inside its worker and
 * reports how many runs it completed. No batcher, no per-request tensors, no messages per run.
 */
import * as ort from 'onnxruntime-node';
import type { InferRequest } from '@tritium/core';
import type { WorkerModelInstance } from '@tritium/core/worker';

export interface TightLoopInit {
  readonly modelPath: string;
  readonly session: Record<string, unknown>;
  readonly batch: number;
  readonly sequence: number;
  readonly vocabSize: number;
}

export async function createInstance(init: TightLoopInit): Promise<WorkerModelInstance> {
  const session = await ort.InferenceSession.create(init.modelPath, init.session as ort.InferenceSession.SessionOptions);
  const n = init.batch * init.sequence;
  const ids = BigInt64Array.from({ length: n }, (_, i) => BigInt((i * 7919) % init.vocabSize));
  const feeds = {
    INPUT_IDS: new ort.Tensor('int64', ids, [init.batch, init.sequence]),
    ATTENTION_MASK: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [init.batch, init.sequence]),
  };
  return {
    async execute(batch: readonly InferRequest[]) {
      const durationMs = Number(batch[0]!.parameters?.['duration_ms'] ?? 1000);
      const t0 = performance.now();
      let runs = 0;
      while (performance.now() - t0 < durationMs) {
        await session.run(feeds, ['LOGITS']);
        runs++;
      }
      const elapsedMs = performance.now() - t0;
      const result = new Float64Array([runs, elapsedMs]);
      return { results: [{ id: batch[0]!.id, model: 'tight', version: 1, outputs: [{ name: 'RESULT', datatype: 'FP64' as const, shape: [2], data: new Uint8Array(result.buffer) }] }] };
    },
    async dispose() {
      await session.release();
    },
  };
}
