/** How the bench turns rounds of windows into one point per configuration (bench/pipeline/measure.ts, limit.ts). */
import { describe, expect, it } from 'vitest';
import { meanLimit, sweepLine, type LimitResult } from './pipeline/limit.ts';
import { measureWindow, pointOf, roundOrder } from './pipeline/measure.ts';

describe('side-by-side rounds', () => {
  it('rotates the order each round, so no configuration always runs first', () => {
    expect([0, 1, 2].map((r) => roundOrder(['a', 'b', 'c'], r))).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c', 'a'],
      ['c', 'a', 'b'],
    ]);
  });

  it('sums windows: throughput is all completions over all measured time, latencies pooled', () => {
    const p = pointOf(64, [
      { completions: 100, elapsedMs: 1000, latenciesUs: [1000, 3000] },
      { completions: 300, elapsedMs: 1000, latenciesUs: [2000] },
    ]);
    expect(p.throughput).toBe(200);
    expect(p.latency.p50Us).toBe(2000);
    expect(p.concurrency).toBe(64);
  });

  it('averages two sweeps of the limit per batch size and picks the best average', () => {
    const sweep = (t8: number, t32: number) => [
      { batchSize: 8, threads: 2, throughput: t8, cpuMsPerInference: 2 },
      { batchSize: 32, threads: 2, throughput: t32, cpuMsPerInference: 1 },
    ];
    const limit = (t8: number, t32: number, best: number): LimitResult => ({
      batchSize: best,
      threads: 2,
      throughput: Math.max(t8, t32),
      latency: { count: 1, avgUs: best, stdUs: 0, p50Us: best, p90Us: best, p95Us: best, p99Us: best },
      cpuMsPerInference: 1,
      sweep: sweep(t8, t32),
      tokens: { mean: 10, padded: [] },
    });
    const m = meanLimit(limit(1000, 900, 8), limit(600, 1100, 32));
    expect(m.batchSize).toBe(32); // 1000 vs 800 on average
    expect(m.throughput).toBe(1000);
    expect(m.latency.p50Us).toBe(32); // from the sweep where 32 was the best
  });

  it('picks the limit over thread counts too, and names each point\'s threads when several were tried', () => {
    const limit = (t1: number, t2: number): LimitResult => ({
      batchSize: 1,
      threads: t1 >= t2 ? 1 : 2,
      throughput: Math.max(t1, t2),
      latency: { count: 1, avgUs: 1, stdUs: 0, p50Us: 1, p90Us: 1, p95Us: 1, p99Us: 1 },
      cpuMsPerInference: 1,
      sweep: [
        { batchSize: 1, threads: 1, throughput: t1, cpuMsPerInference: 2 },
        { batchSize: 1, threads: 2, throughput: t2, cpuMsPerInference: 3 },
      ],
      tokens: { mean: 10, padded: [] },
    });
    const m = meanLimit(limit(500, 600), limit(700, 500));
    expect(m.threads).toBe(1); // 600 vs 550 on average
    expect(m.throughput).toBe(600);
    expect(m.cpuMsPerInference).toBe(2);
    expect(sweepLine(m)).toBe('1t b1: 600/s  2t b1: 550/s');
  });

  it('stretches a window until each part has as many completions as the concurrency (a round trip longer than the window)', async () => {
    const send = () => new Promise<void>((r) => setTimeout(r, 150));
    let edges = 0;
    const w = await measureWindow(3, send, 10, 20, { start: async () => void edges++, end: async () => void edges++ });
    expect(w.completions).toBeGreaterThanOrEqual(3);
    expect(w.latenciesUs.length).toBe(w.completions);
    expect(edges).toBe(2);
  });
});
