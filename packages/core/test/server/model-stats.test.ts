import { describe, expect, it } from 'vitest';
import { EnsembleStats, ModelStats } from '../../src/server/model-stats.ts';

const d = (queueNs: number, ns: number) => ({ queueNs, computeInputNs: ns, computeInferNs: 2 * ns, computeOutputNs: 3 * ns });

describe('ModelStats', () => {
  it("aggregates the scheduler's hooks into Triton's ModelStatistics", () => {
    const s = new ModelStats('m', '1', () => 1234);
    s.requestQueued();
    s.requestQueued();
    s.requestQueued();
    expect(s.pendingRequests).toBe(3);
    s.requestDequeued(10);
    s.requestDequeued(20);
    expect(s.pendingRequests).toBe(1);
    s.execution(2, { computeInputNs: 5, computeInferNs: 50, computeOutputNs: 7 });
    s.requestSucceeded(100, d(10, 1));
    s.requestSucceeded(200, d(20, 1));
    s.requestFailed(30, 'REJECTED', false);
    expect(s.pendingRequests).toBe(0);
    const snap = s.snapshot();
    expect(snap).toMatchObject({
      name: 'm',
      version: '1',
      last_inference: 1234,
      inference_count: 2,
      execution_count: 1,
      inference_stats: {
        success: { count: 2, ns: 300 },
        fail: { count: 1, ns: 30 },
        queue: { count: 2, ns: 30 },
        compute_input: { count: 2, ns: 2 },
        compute_infer: { count: 2, ns: 4 },
        compute_output: { count: 2, ns: 6 },
        cache_hit: { count: 0, ns: 0 },
      },
      batch_stats: [{ batch_size: 2, compute_input: { count: 1, ns: 5 }, compute_infer: { count: 1, ns: 50 }, compute_output: { count: 1, ns: 7 } }],
    });
    expect(s.failureCounts()).toEqual({ REJECTED: 1, CANCELED: 0, BACKEND: 0, OTHER: 0 });
    // Snapshots are copies: later activity does not change an earlier snapshot.
    s.requestSucceeded(1, d(0, 0));
    expect(snap.inference_stats.success.count).toBe(2);
  });

  it('keeps batch sizes apart and sorted', () => {
    const s = new ModelStats('m', '1');
    for (const b of [4, 1, 4]) s.execution(b, { computeInputNs: 1, computeInferNs: 1, computeOutputNs: 1 });
    expect(s.snapshot().batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([
      [1, 1],
      [4, 2],
    ]);
  });

  it('counts an ensemble request as one execution of its batch size with its composing compute (Triton RequestTracker)', () => {
    const e = new EnsembleStats('e', '1');
    e.execution();
    e.requestSucceeded(10, d(0, 0));
    e.requestSucceeded(50, { queueNs: 0, computeInputNs: 1, computeInferNs: 20, computeOutputNs: 3, batchSize: 4 });
    const s = e.snapshot();
    expect(s).toMatchObject({ inference_count: 5, execution_count: 2 });
    expect(s.inference_stats.compute_infer).toEqual({ count: 2, ns: 20 });
    expect(s.batch_stats.map((b) => [b.batch_size, b.compute_infer.count, b.compute_infer.ns])).toEqual([
      [1, 1, 0],
      [4, 1, 20],
    ]);
  });
});
