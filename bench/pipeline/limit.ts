import { availableParallelism } from 'node:os';
import { AutoTokenizer } from '@huggingface/transformers';
import * as ort from 'onnxruntime-node';
import { summarize, type LatencySummary } from '@tritium/perf';

export interface LimitResult {
  readonly batchSize: number;
  /** Sentences per second. */
  readonly throughput: number;
  /** Per-batch latency (tokenize + run). */
  readonly latency: LatencySummary;
  /** Throughput at every batch size tried. */
  readonly sweep: ReadonlyArray<{ batchSize: number; throughput: number }>;
}

/**
 * (e) The limit: the same tokenizer and ONNX model in one process, no server, a tight loop of
 * tokenize(batch) → session.run at each batch size; the best one is the limit. The session uses
 * the thread count Tritium's ONNX backend gives a single instance (all cores), spinning off.
 */
export async function measureLimit(tokenizerDir: string, modelPath: string, sentences: readonly string[], msPerSize: number): Promise<LimitResult> {
  const tokenizer = await AutoTokenizer.from_pretrained(tokenizerDir, { local_files_only: true });
  // Same session settings as the server's bert_classifier in every configuration (see repositories.ts).
  const options = { intraOpNumThreads: availableParallelism(), extra: { session: { intra_op: { allow_spinning: '0' } } } };
  const session = await ort.InferenceSession.create(modelPath, options as ort.InferenceSession.SessionOptions);
  try {
    let best: LimitResult | undefined;
    const sweep: Array<{ batchSize: number; throughput: number }> = [];
    let cursor = 0;
    for (const batchSize of [1, 8, 32, 64, 128, 256]) {
      const latencies: number[] = [];
      let done = 0;
      const start = performance.now();
      while (performance.now() - start < msPerSize) {
        const batch = Array.from({ length: batchSize }, () => sentences[cursor++ % sentences.length]!);
        const t0 = performance.now();
        const enc = tokenizer(batch, { padding: true, truncation: true });
        await session.run({
          INPUT_IDS: new ort.Tensor('int64', enc.input_ids.data as BigInt64Array, enc.input_ids.dims as number[]),
          ATTENTION_MASK: new ort.Tensor('int64', enc.attention_mask.data as BigInt64Array, enc.attention_mask.dims as number[]),
        });
        latencies.push((performance.now() - t0) * 1000);
        done += batchSize;
      }
      const throughput = done / ((performance.now() - start) / 1000);
      sweep.push({ batchSize, throughput });
      if (!best || throughput > best.throughput) best = { batchSize, throughput, latency: summarize(latencies), sweep };
    }
    return { ...best!, sweep };
  } finally {
    await session.release();
  }
}
