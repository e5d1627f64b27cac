/**
 * Triton's per-response statistics (`response_stats`, keyed by response index): filled in by the
 * scheduler for every request the model worked on, decoupled models included, with Triton's
 * accounting (InferenceStatsAggregator::UpdateResponse{Success,Fail,Empty,Cancel}). Manual clock,
 * so every duration is exact.
 */
import { describe, expect, it } from 'vitest';
import { InferError } from '../../src/index.ts';
import { createScheduler } from '../../src/scheduler/index.ts';
import { ModelStats } from '../../src/server/model-stats.ts';
import { manualClock } from '../../src/testing/index.ts';
import type { InferRequest, InferResponse, ResponseSink, StatisticDuration } from '../../src/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import { config, manualInstance, req } from './helpers.ts';

const d = (count: number, ns: number): StatisticDuration => ({ count, ns });
const zero = d(0, 0);
const row = (r: Partial<Record<'compute_infer' | 'compute_output' | 'success' | 'fail' | 'empty_response' | 'cancel', StatisticDuration>>) => ({
  compute_infer: zero,
  compute_output: zero,
  success: zero,
  fail: zero,
  empty_response: zero,
  cancel: zero,
  ...r,
});

const flush = () => new Promise((r) => setTimeout(r, 0));

describe('response statistics', () => {
  it('counts the one response of each executed request: success with its timings, failures, cancellations', async () => {
    const clock = manualClock();
    const stats = new ModelStats('m', '1');
    const inst = manualInstance();
    const s = createScheduler(config({ max_batch_size: 0 }), { modelName: 'm', version: 1, instances: [inst], clock, stats, infer: () => Promise.reject(new Error('unused')) });
    const ok = s.enqueue(req(1, { rows: 1 }));
    clock.advance(100);
    inst.calls[0]!.resolve(undefined, { computeInputNs: 1000, computeInferNs: 2000, computeOutputNs: 3000 });
    await ok;
    await flush();

    const failed = s.enqueue(req(2));
    clock.advance(7);
    inst.calls[1]!.resolve([new InferError('INVALID_ARG', 'bad row')]);
    await expect(failed).rejects.toThrow('bad row');
    await flush();

    const abort = new AbortController();
    const cancelled = s.enqueue(req(3, { signal: abort.signal }));
    clock.advance(4);
    abort.abort();
    await expect(cancelled).rejects.toThrow('cancelled');
    inst.calls[2]!.resolve();
    await flush();

    // Rejected before reaching the model: no response statistics.
    const early = new AbortController();
    early.abort();
    await expect(s.enqueue(req(4, { signal: early.signal }))).rejects.toThrow('cancelled');

    expect(stats.snapshot().response_stats).toEqual({
      '0': row({
        compute_infer: d(2, 3000 + 7000),
        compute_output: d(1, 3000),
        success: d(1, 6000),
        fail: d(1, 7000),
        cancel: d(1, 4000),
      }),
    });
    await s.stop();
  });

  it('counts each response of a decoupled model by its index, and how the stream ended', async () => {
    const clock = manualClock();
    const stats = new ModelStats('d', '1');
    const sinksOf: ResponseSink[][] = [];
    const inst: ModelInstance = {
      execute: () => Promise.reject(new Error('decoupled only')),
      executeDecoupled: (batch: readonly InferRequest[], sinks: readonly ResponseSink[]) => {
        sinksOf.push([...sinks]);
        return Promise.resolve(undefined);
      },
      dispose: () => Promise.resolve(),
    };
    const s = createScheduler(config({ name: 'd', max_batch_size: 0, model_transaction_policy: { decoupled: true } }), {
      modelName: 'd',
      version: 1,
      instances: [inst],
      clock,
      stats,
      infer: () => Promise.reject(new Error('unused')),
    });
    const out = (k: number): InferResponse => ({ id: '', model: 'd', version: 1, outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1], data: new Uint8Array(new Int32Array([k]).buffer) }] });
    const run = async (drive: (sink: ResponseSink) => void): Promise<{ got: number; error?: InferError }> => {
      let got = 0;
      const done = new Promise<{ got: number; error?: InferError }>((resolve) =>
        s.enqueueStream!(req(0), { response: () => void got++, complete: (error) => resolve({ got, error }) }),
      );
      await flush();
      drive(sinksOf.at(-1)![0]!);
      return done;
    };

    // Three responses, 10, 20 and 30 µs apart, then the final flag.
    expect(
      await run((sink) => {
        for (const [k, gap] of [10, 20, 30].entries()) {
          clock.advance(gap);
          sink.response(out(k));
        }
        sink.complete();
      }),
    ).toEqual({ got: 3 });
    // One response, then an error in place of the second.
    const failed = await run((sink) => {
      clock.advance(5);
      sink.response(out(0));
      clock.advance(6);
      sink.complete(new InferError('INTERNAL', 'model broke'));
    });
    expect([failed.got, failed.error?.message]).toEqual([1, 'model broke']);
    // No response at all: an empty response at index 0.
    expect(
      await run((sink) => {
        clock.advance(2);
        sink.complete();
      }),
    ).toEqual({ got: 0 });

    expect(stats.snapshot().response_stats).toEqual({
      '0': row({ compute_infer: d(3, 10_000 + 5000 + 2000), compute_output: d(2, 0), success: d(2, 15_000), empty_response: d(1, 2000) }),
      '1': row({ compute_infer: d(2, 20_000 + 6000), compute_output: d(1, 0), success: d(1, 20_000), fail: d(1, 6000) }),
      '2': row({ compute_infer: d(1, 30_000), compute_output: d(1, 0), success: d(1, 30_000) }),
    });
    await s.stop();
  });
});
