/** PipelineHold's estimate (pipeline-hold.ts): hold until the last step frees, less the earlier steps' time. */
import { describe, expect, it } from 'vitest';
import { PipelineHold } from '../../src/ensemble/runtime/pipeline-hold.ts';
import type { InferRequest, InferResponse } from '../../src/index.ts';

function harness(lastInstances: number, maxHoldUs = 10_000) {
  let now = 0;
  const open = new Map<string, () => void>();
  const hold = new PipelineHold({ lastModel: 'last', lastInstances: () => lastInstances, maxHoldUs, nowUs: () => now });
  const infer = hold.observe(
    (r: InferRequest) => new Promise<InferResponse>((resolve) => open.set(r.id, () => resolve({ id: r.id, model: r.model, version: 1, outputs: [] }))),
  );
  const call = (id: string, model: string) => void infer({ id, model, inputs: [] });
  const finish = async (id: string) => {
    open.get(id)!();
    open.delete(id);
    await new Promise((r) => setImmediate(r));
  };
  return { hold, call, finish, at: (us: number) => void (now = us) };
}

describe('PipelineHold', () => {
  it('holds nothing before it has seen the last step run', () => {
    const h = harness(1);
    h.call('a', 'last');
    expect(h.hold.holdUs(0)).toBe(0);
  });

  it('holds until the last step is expected to free, less the earlier steps, at most the max', async () => {
    const h = harness(1);
    h.call('t1', 'first');
    h.at(2000);
    await h.finish('t1'); // the first step takes 2 ms
    h.call('b1', 'last');
    h.at(10_000);
    await h.finish('b1'); // the last step's service: 8 ms
    expect(h.hold.holdUs(10_000)).toBe(0); // idle last step: never hold
    h.call('b2', 'last');
    h.at(11_000);
    // b2 started at 10 ms, ends ~18 ms; a new batch needs 2 ms to reach it: hold until 16 ms.
    expect(h.hold.holdUs(11_000)).toBe(5000);
    h.at(17_000);
    expect(h.hold.holdUs(17_000)).toBe(0);
  });

  it('caps the hold at the max queue delay', async () => {
    const h = harness(1, 1000);
    h.call('b1', 'last');
    h.at(8000);
    await h.finish('b1');
    h.call('b2', 'last');
    expect(h.hold.holdUs(8000)).toBe(1000);
  });

  it('with two instances of the last step, holds only while both are busy', async () => {
    const h = harness(2);
    h.call('b1', 'last');
    h.at(8000);
    await h.finish('b1');
    h.call('b2', 'last');
    expect(h.hold.holdUs(8000)).toBe(0);
    h.call('b3', 'last');
    expect(h.hold.holdUs(8000)).toBeGreaterThan(0);
  });
});

