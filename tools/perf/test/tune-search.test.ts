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
    const pipeline = applyCandidate(plan, { mode: 'pipeline', delayUs: 500, preferred: 8, adaptive: true, batchTokens: 0, instances: { tok: 2, cls: 1 } });
    expect(pipeline['ens']!['dynamic_batching']).toMatchObject({ preferred_batch_size: [8], max_queue_delay_microseconds: '500' });
    expect(pipeline['ens']!.parameters?.['tritium.batching']).toEqual({ string_value: 'adaptive' });
    expect(pipeline['tok']!.instance_group?.[0]?.count).toBe(2);
    expect(pipeline['tok']!['dynamic_batching']).toBeUndefined();
    const perStep = applyCandidate(plan, { mode: 'per-step', delayUs: 500, preferred: 0, adaptive: false, batchTokens: 0, instances: { tok: 1, cls: 1 } });
    expect(perStep['ens']!['dynamic_batching']).toBeUndefined();
    expect(perStep['cls']!['dynamic_batching']).toMatchObject({ preferred_batch_size: [], max_queue_delay_microseconds: '500' });
  });
});

describe('tune search: the token budget', () => {
  const lengths = { string_value: 'mask' };
  const tokensPlan: ModelPlan = {
    ...plan,
    base: { ...plan.base, ens: { ...plan.base['ens']!, parameters: { 'tritium.batch_tokens': { string_value: '16384' }, 'tritium.batch_tokens.lengths': lengths } } },
  };

  it('walks the budget ladder from the one as written to the best', async () => {
    const clock = { t: 0 };
    const calls: Candidate[] = [];
    // Throughput peaks at a budget of 2048 padded tokens; everything else as in the landscape above.
    const measure = async (c: Candidate): Promise<Measured> => {
      calls.push(c);
      clock.t += 10_000;
      const throughput = landscape(c) - (c.batchTokens === 0 ? 300 : Math.abs(Math.log2(c.batchTokens / 2048)) * 30);
      const level = { concurrency: 8, throughput, p50Ms: 5, p99Ms: 10, budgetMs: 10, stable: true, batchSizes: {} };
      return { candidate: c, configs: applyCandidate(tokensPlan, c), levels: [level], best: level, cpuPerInferenceMs: 1 };
    };
    expect(baselineCandidate(tokensPlan).batchTokens).toBe(16384);
    const r = await search({ plan: tokensPlan, maxInstances: 6, budgetMs: 10_000_000, measure, now: () => clock.t });
    expect(r.winner.candidate).toMatchObject({ mode: 'pipeline', batchTokens: 2048 });
    expect(new Set(calls.map(candidateKey)).size).toBe(calls.length);
    // A plan whose config sets no budget never varies it.
    expect(baselineCandidate(plan).batchTokens).toBe(0);
  });

  it('writes the budget beside the lengths as written; off and per-step remove every token parameter', () => {
    const base = baselineCandidate(tokensPlan);
    const on = applyCandidate(tokensPlan, { ...base, batchTokens: 4096 })['ens']!.parameters!;
    expect(on['tritium.batch_tokens']).toEqual({ string_value: '4096' });
    expect(on['tritium.batch_tokens.lengths']).toEqual(lengths);
    const off = applyCandidate(tokensPlan, { ...base, batchTokens: 0 })['ens']!.parameters!;
    expect(Object.keys(off).filter((k) => k.startsWith('tritium.batch_tokens'))).toEqual([]);
    const perStep = applyCandidate(tokensPlan, { ...base, mode: 'per-step' })['ens']!.parameters!;
    expect(Object.keys(perStep).filter((k) => k.startsWith('tritium.batch_tokens'))).toEqual([]);
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
