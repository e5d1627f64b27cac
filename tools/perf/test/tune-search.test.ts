/**
 * tritium tune's search and flags, without a server: the search is coordinate descent over a
 * deterministic landscape (a function of the candidate), so its moves, pruning and budget are exact.
 */
import { describe, expect, it } from 'vitest';
import { search } from '../src/tune/search.ts';
import { applyCandidate, baselineCandidate, candidateKey, type Candidate, type ModelPlan } from '../src/tune/search-space.ts';
import type { Measured } from '../src/tune/measure-candidate.ts';
import { parseTuneArgs } from '../src/tune/tune-options.ts';

const plan: ModelPlan = {
  target: 'ens',
  steps: ['tok', 'cls'],
  base: {
    ens: { name: 'ens', max_batch_size: 64, dynamic_batching: { preferred_batch_size: [64], max_queue_delay_microseconds: '10000' }, ensemble_scheduling: { step: [] } },
    tok: { name: 'tok', max_batch_size: 64, instance_group: [{ count: 1, kind: 'KIND_CPU' }] },
    cls: { name: 'cls', max_batch_size: 64, instance_group: [{ count: 1, kind: 'KIND_CPU' }] },
  },
  adaptiveSupported: true,
};

/** Throughput peaks at tok=3 instances, cls=1, delay 1000 µs, preferred 16; latency grows with the delay. */
function landscape(c: Candidate): number {
  const tok = c.instances['tok']!;
  const cls = c.instances['cls']!;
  return 1000 - 100 * Math.abs(tok - 3) - 150 * Math.abs(cls - 1) - Math.abs(Math.log2((c.delayUs + 1) / 1001)) * 40 - Math.abs(Math.log2(Math.max(1, c.preferred) / 16)) * 20 - (c.mode === 'per-step' ? 200 : 0);
}

function measureWith(clock: { t: number }, costMs = 10_000) {
  const calls: Candidate[] = [];
  const measure = async (c: Candidate): Promise<Measured> => {
    calls.push(c);
    clock.t += costMs;
    const throughput = landscape(c);
    const p99 = 5 + c.delayUs / 1000;
    const level = { concurrency: 8, throughput, p50Ms: p99 / 2, p99Ms: p99, budgetMs: p99, stable: true, batchSizes: {} };
    return { candidate: c, configs: applyCandidate(plan, c), levels: [level], best: p99 <= 50 ? level : undefined, cpuPerInferenceMs: 1 };
  };
  return { calls, measure };
}

describe('tune search', () => {
  it('climbs to the best configuration from the one as written, measuring no candidate twice', async () => {
    const clock = { t: 0 };
    const { calls, measure } = measureWith(clock);
    const r = await search({ plan, maxInstances: 6, budgetMs: 10_000_000, measure, now: () => clock.t });
    expect(r.stopped).toBe('converged');
    expect(r.baseline.candidate).toEqual(baselineCandidate(plan));
    expect(r.winner.candidate).toMatchObject({ mode: 'pipeline', delayUs: 1000, preferred: 16, instances: { tok: 3, cls: 1 } });
    expect(new Set(calls.map(candidateKey)).size).toBe(calls.length);
    // Pruned: cls never went past 2 (its second instance lost), tok never past 4.
    expect(Math.max(...calls.map((c) => c.instances['cls']!))).toBeLessThanOrEqual(2);
    expect(Math.max(...calls.map((c) => c.instances['tok']!))).toBeLessThanOrEqual(4);
  });

  it('stops when the next candidate would not fit the time budget', async () => {
    const clock = { t: 0 };
    const { calls, measure } = measureWith(clock);
    const r = await search({ plan, maxInstances: 6, budgetMs: 35_000, measure, now: () => clock.t });
    expect(r.stopped).toBe('time budget');
    expect(calls.length).toBe(3);
  });

  it('writes candidates into the configs: pipeline batching on the ensemble, or per step', () => {
    const pipeline = applyCandidate(plan, { mode: 'pipeline', delayUs: 500, preferred: 8, adaptive: true, instances: { tok: 2, cls: 1 } });
    expect(pipeline['ens']!['dynamic_batching']).toMatchObject({ preferred_batch_size: [8], max_queue_delay_microseconds: '500' });
    expect(pipeline['ens']!.parameters?.['tritium.batching']).toEqual({ string_value: 'adaptive' });
    expect(pipeline['tok']!.instance_group?.[0]?.count).toBe(2);
    expect(pipeline['tok']!['dynamic_batching']).toBeUndefined();
    const perStep = applyCandidate(plan, { mode: 'per-step', delayUs: 500, preferred: 0, adaptive: false, instances: { tok: 1, cls: 1 } });
    expect(perStep['ens']!['dynamic_batching']).toBeUndefined();
    expect(perStep['cls']!['dynamic_batching']).toMatchObject({ preferred_batch_size: [], max_queue_delay_microseconds: '500' });
  });
});

describe('tune flags', () => {
  it('reads the SLO, the load and the budget', () => {
    const t = parseTuneArgs(['-m', 'm', '-u', 'h:1', '--latency-budget', 'p95=0.5s', '--concurrency-range', '2:20', '--time-budget', '90s', '--min-throughput', '100']);
    expect(t).toMatchObject({ latencyBudget: { percentile: 95, ms: 500 }, concurrency: [2, 4, 8, 16, 20], timeBudgetMs: 90_000, minThroughput: 100 });
    expect(parseTuneArgs(['-m', 'm', '-u', 'h:1', '--concurrency-range', '4:12:4']).concurrency).toEqual([4, 8, 12]);
  });

  it('refuses what it cannot use, naming the flag', () => {
    expect(() => parseTuneArgs(['-u', 'h:1'])).toThrow('-m <model> is required');
    expect(() => parseTuneArgs(['-m', 'm', '-u', 'h:1', '--model-repository', 'r'])).toThrow('give either --model-repository');
    expect(() => parseTuneArgs(['-m', 'm', '-u', 'h:1', '--time-budget', 'soon'])).toThrow("invalid value for --time-budget: 'soon'");
    expect(() => parseTuneArgs(['-m', 'm', '-u', 'h:1', '--max-instances', '0'])).toThrow('--max-instances');
    expect(() => parseTuneArgs(['-m', 'm', '-u', 'h:1', '--bogus'])).toThrow("unknown option '--bogus'");
  });
});
