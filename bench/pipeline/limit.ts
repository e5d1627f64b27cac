import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import { summarize, type LatencySummary } from '@tritium/perf';
import { plainTokenizer } from './plain-tokenizer.ts';

/** One point of the limit's sweep: a batch size at an intra-op thread count. */
export interface LimitPoint {
  readonly batchSize: number;
  readonly threads: number;
  readonly throughput: number;
  readonly cpuMsPerInference: number;
}

export interface LimitResult {
  readonly batchSize: number;
  /** ONNX Runtime intra-op threads of the best point. */
  readonly threads: number;
  /** Sentences per second. */
  readonly throughput: number;
  /** Per-batch latency (tokenize + run). */
  readonly latency: LatencySummary;
  /** CPU milliseconds per sentence at the best batch size (this process: tokenizer and ONNX Runtime's threads). */
  readonly cpuMsPerInference: number;
  /** Throughput and CPU per sentence at every batch size (and thread count) tried. */
  readonly sweep: ReadonlyArray<LimitPoint>;
  /** Tokens per sentence (with [CLS]/[SEP]) and, per batch size, padded tokens per sentence. */
  readonly tokens: { readonly mean: number; readonly padded: ReadonlyArray<{ batchSize: number; perSentence: number }> };
}

/**
 * (e) The limit: the same tokenizer and ONNX model in one process, no server, a tight loop of
 * tokenize(batch) → session.run at each batch size, after an unmeasured pass; the best one is the limit. The tokenizer is the
 * example model.ts's own code (plain-tokenizer.ts); spinning off, as served. `threadCounts`: the
 * intra-op thread counts tried, each a session of its own (default: all cores, what Tritium's ONNX
 * backend gives a single instance); the best point over every count and batch size is the limit.
 */
export async function measureLimit(
  tokenizerDir: string,
  modelPath: string,
  sentences: readonly string[],
  msPerSize: number,
  threadCounts: readonly number[] = [availableParallelism()],
): Promise<LimitResult> {
  const tokenize = plainTokenizer(tokenizerDir);
  let best: Omit<LimitResult, 'tokens'> | undefined;
  const sweep: LimitPoint[] = [];
  for (const threads of threadCounts) {
    const point = await sweepSession(tokenize, modelPath, sentences, msPerSize, threads);
    sweep.push(...point.sweep);
    if (!best || point.throughput > best.throughput) best = point;
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
}

/** One session at `threads` intra-op threads: an unmeasured pass, then each batch size; its best point. */
async function sweepSession(
  tokenize: ReturnType<typeof plainTokenizer>,
  modelPath: string,
  sentences: readonly string[],
  msPerSize: number,
  threads: number,
): Promise<Omit<LimitResult, 'tokens'>> {
  const options = { intraOpNumThreads: threads, extra: { session: { intra_op: { allow_spinning: '0' } } } };
  const session = await ort.InferenceSession.create(modelPath, options as ort.InferenceSession.SessionOptions);
  try {
    let best: Omit<LimitResult, 'tokens'> | undefined;
    const sweep: LimitPoint[] = [];
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
      sweep.push({ batchSize, threads, throughput, cpuMsPerInference });
      if (!best || throughput > best.throughput) best = { batchSize, threads, throughput, cpuMsPerInference, latency: summarize(latencies), sweep };
    }
    return best!;
  } finally {
    await session.release();
  }
}

/** A sweep as one line: `b1: 609/s  b8: 386/s`, each point led by its thread count when several were tried. */
export function sweepLine(l: LimitResult, separator = '  '): string {
  const several = new Set(l.sweep.map((s) => s.threads)).size > 1;
  return l.sweep.map((s) => `${several ? `${s.threads}t ` : ''}b${s.batchSize}: ${s.throughput.toFixed(0)}/s`).join(separator);
}

/**
 * Two sweeps of the limit (before and after the configurations compared with it) as one: each batch
 * size's throughput and CPU averaged, the best batch size chosen from the averages.
 */
export function meanLimit(a: LimitResult, b: LimitResult): LimitResult {
  const sweep = a.sweep.map((s, i) => {
    const o = b.sweep[i]!;
    return { batchSize: s.batchSize, threads: s.threads, throughput: (s.throughput + o.throughput) / 2, cpuMsPerInference: (s.cpuMsPerInference + o.cpuMsPerInference) / 2 };
  });
  const best = sweep.reduce((x, y) => (y.throughput > x.throughput ? y : x));
  // Latency percentiles do not average: the best point's from a sweep where it was the best too.
  const latency = [a, b].find((l) => l.batchSize === best.batchSize && l.threads === best.threads)?.latency ?? a.latency;
  return { batchSize: best.batchSize, threads: best.threads, throughput: best.throughput, cpuMsPerInference: best.cpuMsPerInference, latency, sweep, tokens: a.tokens };
}
