import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import { summarize, type LatencySummary } from '@tritium/perf';
import { plainTokenizer } from './plain-tokenizer.ts';

export interface LimitResult {
  readonly batchSize: number;
  /** Sentences per second. */
  readonly throughput: number;
  /** Per-batch latency (tokenize + run). */
  readonly latency: LatencySummary;
  /** CPU milliseconds per sentence at the best batch size (this process: tokenizer and ONNX Runtime's threads). */
  readonly cpuMsPerInference: number;
  /** Throughput and CPU per sentence at every batch size tried. */
  readonly sweep: ReadonlyArray<{ batchSize: number; throughput: number; cpuMsPerInference: number }>;
  /** Tokens per sentence (with [CLS]/[SEP]) and, per batch size, padded tokens per sentence. */
  readonly tokens: { readonly mean: number; readonly padded: ReadonlyArray<{ batchSize: number; perSentence: number }> };
}

/**
 * (e) The limit: the same tokenizer and ONNX model in one process, no server, a tight loop of
 * tokenize(batch) → session.run at each batch size, after an unmeasured pass; the best one is the limit. The tokenizer is the
 * example model.ts's own code (plain-tokenizer.ts); the session uses the thread count Tritium's ONNX
 * backend gives a single instance (all cores), spinning off.
 */
export async function measureLimit(tokenizerDir: string, modelPath: string, sentences: readonly string[], msPerSize: number): Promise<LimitResult> {
  const tokenize = plainTokenizer(tokenizerDir);
  // Same session settings as the server's bert_classifier in every configuration (see repositories.ts).
  const options = { intraOpNumThreads: availableParallelism(), extra: { session: { intra_op: { allow_spinning: '0' } } } };
  const session = await ort.InferenceSession.create(modelPath, options as ort.InferenceSession.SessionOptions);
  try {
    let best: Omit<LimitResult, 'tokens'> | undefined;
    const sweep: Array<{ batchSize: number; throughput: number; cpuMsPerInference: number }> = [];
    let cursor = 0;
    // Unmeasured first, as each server is (run-all.ts warmServer): the tokenizer's code compiles
    // and the session meets its first shapes before any size is timed.
    const warmEnd = performance.now() + msPerSize;
    while (performance.now() < warmEnd) {
      const enc = tokenize([sentences[cursor++ % sentences.length]!]);
      await session.run({ INPUT_IDS: new ort.Tensor('int64', enc.ids, enc.dims), ATTENTION_MASK: new ort.Tensor('int64', enc.mask, enc.dims) });
    }
    for (const batchSize of [1, 8, 32, 64, 128, 256]) {
      const latencies: number[] = [];
      let done = 0;
      const cpu0 = process.cpuUsage();
      const start = performance.now();
      while (performance.now() - start < msPerSize) {
        const batch = Array.from({ length: batchSize }, () => sentences[cursor++ % sentences.length]!);
        const t0 = performance.now();
        const enc = tokenize(batch);
        await session.run({
          INPUT_IDS: new ort.Tensor('int64', enc.ids, enc.dims),
          ATTENTION_MASK: new ort.Tensor('int64', enc.mask, enc.dims),
        });
        latencies.push((performance.now() - t0) * 1000);
        done += batchSize;
      }
      const throughput = done / ((performance.now() - start) / 1000);
      const cpu = process.cpuUsage(cpu0);
      const cpuMsPerInference = (cpu.user + cpu.system) / 1000 / done;
      sweep.push({ batchSize, throughput, cpuMsPerInference });
      if (!best || throughput > best.throughput) best = { batchSize, throughput, cpuMsPerInference, latency: summarize(latencies), sweep };
    }
    // Padding cost of batching these sentences in arrival order: a batch is as long as its longest.
    const lengths = sentences.map((x) => tokenize([x]).dims[1]);
    const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
    const padded = [8, 64].map((batchSize) => {
      let total = 0;
      const rounds = lengths.length;
      for (let r = 0; r < rounds; r++) {
        const batch = Array.from({ length: batchSize }, (_, j) => lengths[(r + j) % lengths.length]!);
        total += Math.max(...batch) * batchSize;
      }
      return { batchSize, perSentence: total / (rounds * batchSize) };
    });
    return { ...best!, sweep, tokens: { mean, padded } };
  } finally {
    await session.release();
  }
}

/**
 * Two sweeps of the limit (before and after the configurations compared with it) as one: each batch
 * size's throughput and CPU averaged, the best batch size chosen from the averages.
 */
export function meanLimit(a: LimitResult, b: LimitResult): LimitResult {
  const sweep = a.sweep.map((s, i) => {
    const o = b.sweep[i]!;
    return { batchSize: s.batchSize, throughput: (s.throughput + o.throughput) / 2, cpuMsPerInference: (s.cpuMsPerInference + o.cpuMsPerInference) / 2 };
  });
  const best = sweep.reduce((x, y) => (y.throughput > x.throughput ? y : x));
  // Latency percentiles do not average: the best size's from a sweep where it was the best too.
  const latency = [a, b].find((l) => l.batchSize === best.batchSize)?.latency ?? a.latency;
  return { batchSize: best.batchSize, throughput: best.throughput, cpuMsPerInference: best.cpuMsPerInference, latency, sweep, tokens: a.tokens };
}
