/**
 * The dynamic batcher's BLS cycle guard (issue 12 item 4), with in-thread instances: an execution
 * tells its instance who it runs for (ExecuteContext.callers); a call carrying callers that hold
 * every slot of the model it targets is refused at once naming the chain, instead of queueing forever.
 */
import { describe, expect, it } from 'vitest';
import { DynamicBatcher, batcherOptionsFromConfig } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import type { CallFrame, InferRequest } from '../../src/index.ts';
import { config, dynamicBatching, flush, manualInstance, req, settle } from './helpers.ts';

function batcher(name: string, instances: number) {
  const insts = Array.from({ length: instances }, () => manualInstance());
  const cfg = config({ name, dynamic_batching: dynamicBatching() });
  return { insts, s: new DynamicBatcher(batcherOptionsFromConfig(cfg, 1), { instances: insts, clock: manualClock() }) };
}

/** A call made from inside an execution: it carries that execution's callers. */
const call = (callers: readonly CallFrame[], model = 'm'): InferRequest => ({ ...req(1, { model }), callers });

describe('BLS cycle guard', () => {
  it('an execution runs for its requests’ callers plus its own slot', async () => {
    const { insts, s } = batcher('m', 1);
    const outer: CallFrame = { model: 'outer', id: -1 };
    void settle(s.enqueue(call([outer])));
    await flush();
    const callers = insts[0]!.calls[0]!.context!.callers;
    expect(callers.map((f) => f.model)).toEqual(['outer', 'm']);
    expect(callers[0]).toBe(outer);
  });

  it('refuses at once a call that could only run on a slot its own callers hold, naming the chain', async () => {
    const { insts, s } = batcher('m', 1);
    void settle(s.enqueue(req(1)));
    await flush();
    const chain = [{ model: 'a', id: -1 }, ...insts[0]!.calls[0]!.context!.callers];
    const refused = settle(s.enqueue(call(chain)));
    await flush();
    expect(refused.error).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining("BLS call cycle: a -> m -> m: all 1 instance(s) of model 'm' are held by executions waiting on calls into it"),
    });
    expect(s.inflight).toBe(1);
  });

  it('with two instances a self-call runs on the other; two executions each calling in wait on nothing left, so the second is refused', async () => {
    const { insts, s } = batcher('m', 2);
    void settle(s.enqueue(req(1)));
    await flush();
    const first = insts[0]!.calls[0]!.context!.callers;
    const nested = settle(s.enqueue(call(first)));
    await flush();
    expect(nested.done).toBe(false);
    // The nested call runs on the second instance; a call from there back in holds both.
    const second = insts[1]!.calls[0]!.context!.callers;
    expect(second.map((f) => f.model)).toEqual(['m', 'm']);
    const refused = settle(s.enqueue(call(second)));
    await flush();
    expect(refused.error?.message).toContain('BLS call cycle: m -> m -> m: all 2 instance(s)');
    // Once the nested call is answered its caller's slot no longer counts as waiting.
    insts[1]!.calls[0]!.resolve();
    await flush();
    expect(nested.value).toBeDefined();
    const later = settle(s.enqueue(call(first)));
    await flush();
    expect(later.done).toBe(false);
    expect(insts[1]!.calls).toHaveLength(2);
  });

  it('calls into another model, or from outside any execution, are never refused', async () => {
    const { insts, s } = batcher('m', 1);
    void settle(s.enqueue(req(1)));
    await flush();
    const queued = settle(s.enqueue(call([{ model: 'other', id: -7 }])));
    const plain = settle(s.enqueue(req(2)));
    await flush();
    expect(queued.done || plain.done).toBe(false);
    insts[0]!.calls[0]!.resolve();
    await flush();
    insts[0]!.calls[1]!.resolve();
    await flush();
    expect(queued.value && plain.value).toBeTruthy();
  });
});
