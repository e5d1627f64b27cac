/**
 * The sequence batcher with controllable in-thread instances and a manual clock: routing of a
 * sequence to one slot, Triton's batch rows (direct) with filler rows, control tensor values, the
 * backlog, idle release, implicit state, the oldest strategy, cancellation and Triton's errors.
 */
import { describe, expect, it } from 'vitest';
import {
  tensorFromTyped,
  typedView,
  type CorrelationId,
  type InferRequest,
  type InferResponse,
  type ModelConfig,
  type Tensor,
} from '../../src/index.ts';
import { type ExecuteResult, type ModelInstance } from '../../src/backend/index.ts';
import { normalizeModelConfig, parseModelConfigText } from '../../src/config/index.ts';
import { createScheduler, type Scheduler } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import { captureLog } from '../../src/testing/index.ts';
import { flush, manualInstance, settle, type Call } from './helpers.ts';

const CONTROLS = `
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "END" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }
  ]`;

function seqConfig(maxBatch: number, sequenceBatching: string, extra = ''): ModelConfig {
  const text = `name: "seq"
backend: "fake"
max_batch_size: ${maxBatch}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching { ${sequenceBatching} }
${extra}`;
  return normalizeModelConfig(parseModelConfigText(text), { modelName: 'seq' });
}

function scheduler(config: ModelConfig, instances: ModelInstance[], log = captureLog()) {
  const clock = manualClock();
  const s = createScheduler(config, { modelName: config.name, version: 1, instances, clock, log, infer: () => Promise.reject(new Error('unused')) });
  return { clock, s };
}

let n = 0;
function req(batching: boolean, id: CorrelationId, value: number, flags: { start?: boolean; end?: boolean } = {}, extra: Partial<InferRequest> = {}): InferRequest {
  return {
    id: `r${n++}`,
    model: 'seq',
    inputs: [tensorFromTyped('INPUT', 'INT32', batching ? [1, 1] : [1], Int32Array.of(value))],
    sequence: { id, ...flags },
    ...extra,
  };
}

const scalarOf = (t: Tensor | undefined): number | bigint | undefined => (t ? (typedView(t)[0] as number | bigint) : undefined);
/** The control and input values of each row of an execution. */
function rows(call: Call): Record<string, number | bigint | undefined>[] {
  return call.batch.map((r) => Object.fromEntries(r.inputs.map((t) => [t.name, scalarOf(t)])));
}
/** Answers each row with OUTPUT = INPUT. */
function answer(call: Call): void {
  call.resolve(
    call.batch.map((r) => ({ id: r.id, model: 'seq', version: 1, outputs: [{ ...r.inputs.find((t) => t.name === 'INPUT')!, name: 'OUTPUT' }] })),
  );
}
const value = (r: InferResponse | undefined): number => (typedView(r!.outputs[0]!) as Int32Array)[0]!;

describe('sequence batcher: routing and errors', () => {
  it("refuses what Triton refuses, with Triton's messages", async () => {
    const { s } = scheduler(seqConfig(2, CONTROLS), [manualInstance()]);
    const noId = settle(s.enqueue({ id: 'a', model: 'seq', inputs: req(true, 1, 0).inputs }));
    const zero = settle(s.enqueue(req(true, 0, 0, { start: true })));
    const unknown = settle(s.enqueue(req(true, 42, 0)));
    const batch2 = settle(s.enqueue({ ...req(true, 5, 0, { start: true }), inputs: [tensorFromTyped('INPUT', 'INT32', [2, 1], Int32Array.of(1, 2))] }));
    const stringId = settle(s.enqueue(req(true, 'abc', 0, { start: true }, { id: 'x1' })));
    await flush();
    expect(noId.error?.message).toBe("inference request to model 'seq' must specify a non-zero or non-empty correlation ID");
    expect(zero.error?.message).toBe("inference request to model 'seq' must specify a non-zero or non-empty correlation ID");
    expect(unknown.error).toMatchObject({
      code: 'INVALID_ARG',
      message: "inference request for sequence 42 to model 'seq' must specify the START flag on the first request of the sequence",
    });
    expect(batch2.error?.message).toBe("inference request to model 'seq' must specify batch-size 1 due to requirements of sequence batcher");
    expect(stringId.error?.message).toBe("[request id: x1] sequence batching control 'CORRID' data-type is 'BYTES', but model 'seq' expects 'UINT64'");
  });

  it('an ended sequence is unknown again: its next request without START fails', async () => {
    const inst = manualInstance();
    const { s } = scheduler(seqConfig(0, CONTROLS), [inst]);
    const only = settle(s.enqueue(req(false, 7, 1, { start: true, end: true })));
    await flush();
    answer(inst.calls[0]!);
    await flush();
    expect(value(only.value)).toBe(1);
    const late = settle(s.enqueue(req(false, 7, 2)));
    await flush();
    expect(late.error?.message).toMatch(/sequence 7 .* must specify the START flag/);
  });
});

describe('sequence batcher: direct strategy', () => {
  it('gives each sequence its own batch row, with the controls Triton sends and filler rows for idle slots', async () => {
    const inst = manualInstance();
    const { s } = scheduler(seqConfig(2, CONTROLS), [inst]);
    const a1 = settle(s.enqueue(req(true, 100, 10, { start: true })));
    await flush();
    // One sequence, slot 0: a batch of one row.
    expect(rows(inst.calls[0]!)).toEqual([{ INPUT: 10, START: 1, END: 0, READY: 1, CORRID: 100n }]);
    const b1 = settle(s.enqueue(req(true, 200, 20, { start: true })));
    const a2 = settle(s.enqueue(req(true, 100, 11)));
    answer(inst.calls[0]!);
    await flush();
    // Sequence 100 keeps row 0, sequence 200 takes row 1.
    expect(rows(inst.calls[1]!)).toEqual([
      { INPUT: 11, START: 0, END: 0, READY: 1, CORRID: 100n },
      { INPUT: 20, START: 1, END: 0, READY: 1, CORRID: 200n },
    ]);
    const b2 = settle(s.enqueue(req(true, 200, 21, { end: true })));
    answer(inst.calls[1]!);
    await flush();
    // Only slot 1 has work: slot 0 gets a filler row (READY 0, CORRID 0), slot 1 keeps its row.
    expect(rows(inst.calls[2]!)).toEqual([
      { INPUT: 21, START: 0, END: 0, READY: 0, CORRID: 0n },
      { INPUT: 21, START: 0, END: 1, READY: 1, CORRID: 200n },
    ]);
    answer(inst.calls[2]!);
    await flush();
    expect([a1, a2, b1, b2].map((o) => value(o.value))).toEqual([10, 11, 20, 21]);
    expect(s.inflight).toBe(0);
  });

  it('keeps a sequence on one instance and spreads new sequences over free slots', async () => {
    const a = manualInstance();
    const b = manualInstance();
    const { s } = scheduler(seqConfig(0, CONTROLS), [a, b]);
    settle(s.enqueue(req(false, 1, 1, { start: true })));
    settle(s.enqueue(req(false, 2, 2, { start: true })));
    await flush();
    expect(rows(a.calls[0]!)[0]!['CORRID']).toBe(1n);
    expect(rows(b.calls[0]!)[0]!['CORRID']).toBe(2n);
    settle(s.enqueue(req(false, 2, 3)));
    settle(s.enqueue(req(false, 1, 4)));
    answer(a.calls[0]!);
    answer(b.calls[0]!);
    await flush();
    expect(rows(a.calls[1]!)[0]).toMatchObject({ CORRID: 1n, INPUT: 4 });
    expect(rows(b.calls[1]!)[0]).toMatchObject({ CORRID: 2n, INPUT: 3 });
  });

  it('parks a sequence in the backlog until a slot frees, then runs it from its START', async () => {
    const inst = manualInstance();
    const { s } = scheduler(seqConfig(0, CONTROLS), [inst]);
    const a1 = settle(s.enqueue(req(false, 1, 1, { start: true })));
    const b1 = settle(s.enqueue(req(false, 2, 10, { start: true })));
    const b2 = settle(s.enqueue(req(false, 2, 11, { end: true })));
    await flush();
    expect(inst.calls).toHaveLength(1);
    expect((s as unknown as { sequences: unknown }).sequences).toEqual({ active: 1, backlogged: 1 });
    answer(inst.calls[0]!);
    const a2 = settle(s.enqueue(req(false, 1, 2, { end: true })));
    await flush();
    answer(inst.calls[1]!);
    await flush();
    answer(inst.calls[2]!);
    await flush();
    answer(inst.calls[3]!);
    await flush();
    expect(inst.calls.map((c) => rows(c)[0]!['CORRID'])).toEqual([1n, 1n, 2n, 2n]);
    expect(rows(inst.calls[2]!)[0]).toMatchObject({ START: 1, INPUT: 10 });
    expect([a1, a2, b1, b2].map((o) => value(o.value))).toEqual([1, 2, 10, 11]);
  });

  it('fails a backlogged sequence whose request timeout passes before it gets a slot', async () => {
    const inst = manualInstance();
    const { s, clock } = scheduler(seqConfig(0, CONTROLS), [inst]);
    settle(s.enqueue(req(false, 1, 1, { start: true })));
    const waiting = settle(s.enqueue(req(false, 2, 10, { start: true }, { timeoutUs: 5_000 })));
    await flush();
    clock.advance(5_000);
    await flush();
    expect(waiting.error).toMatchObject({ code: 'UNAVAILABLE', message: 'timeout of the corresponding sequence has been expired' });
  });

  it('releases an idle sequence after max_sequence_idle_microseconds: its slot goes to the backlog and its next request needs START', async () => {
    const inst = manualInstance();
    const { s, clock } = scheduler(seqConfig(0, `max_sequence_idle_microseconds: 1000 ${CONTROLS}`), [inst]);
    settle(s.enqueue(req(false, 1, 1, { start: true })));
    await flush();
    answer(inst.calls[0]!);
    await flush();
    clock.advance(500);
    const b1 = settle(s.enqueue(req(false, 2, 10, { start: true })));
    await flush();
    expect(inst.calls).toHaveLength(1); // sequence 2 waits for the only slot
    clock.advance(600); // sequence 1 is now idle for 1100 us
    await flush();
    expect(inst.calls).toHaveLength(2);
    expect(rows(inst.calls[1]!)[0]).toMatchObject({ CORRID: 2n, START: 1 });
    answer(inst.calls[1]!);
    await flush();
    expect(value(b1.value)).toBe(10);
    const stale = settle(s.enqueue(req(false, 1, 2)));
    await flush();
    expect(stale.error?.message).toMatch(/sequence 1 .* must specify the START flag/);
  });

  it('cancelling a queued request ends its sequence: its successors are cancelled and its slot freed', async () => {
    const inst = manualInstance();
    const { s } = scheduler(seqConfig(0, CONTROLS), [inst]);
    settle(s.enqueue(req(false, 1, 1, { start: true })));
    const ctl = new AbortController();
    const second = settle(s.enqueue(req(false, 1, 2, {}, { signal: ctl.signal })));
    const third = settle(s.enqueue(req(false, 1, 3)));
    const other = settle(s.enqueue(req(false, 2, 20, { start: true, end: true })));
    await flush();
    ctl.abort();
    await flush();
    expect(second.error?.code).toBe('CANCELLED');
    expect(third.error?.code).toBe('CANCELLED');
    answer(inst.calls[0]!);
    await flush();
    expect(rows(inst.calls[1]!)[0]).toMatchObject({ CORRID: 2n });
    answer(inst.calls[1]!);
    await flush();
    expect(value(other.value)).toBe(20);
    expect(s.inflight).toBe(0);
  });

  it('warns when a sequence starts again before it ended, and carries on in the same slot', async () => {
    const inst = manualInstance();
    const cap = captureLog();
    const { s } = scheduler(seqConfig(0, CONTROLS), [inst], cap);
    settle(s.enqueue(req(false, 9, 1, { start: true })));
    settle(s.enqueue(req(false, 9, 2, { start: true })));
    await flush();
    expect(cap.lines.join('\n')).toMatch("sequence 9 for model 'seq' has a conflict. The previous sequence did not end before this sequence start. Previous sequence will be terminated early.");
    answer(inst.calls[0]!);
    await flush();
    expect(rows(inst.calls[1]!)[0]).toMatchObject({ CORRID: 9n, START: 1, INPUT: 2 });
  });
});

describe('sequence batcher: implicit state', () => {
  const STATE = `${CONTROLS}
    state [ { input_name: "ACC_IN" output_name: "ACC_OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]`;

  /** A model that adds INPUT to its state and returns the sum as OUTPUT and as the next state. */
  function accumulate(call: Call): void {
    call.resolve(
      call.batch.map((r): ExecuteResult => {
        const v = scalarOf(r.inputs.find((t) => t.name === 'INPUT')) as number;
        const acc = scalarOf(r.inputs.find((t) => t.name === 'ACC_IN')) as number;
        const sum = tensorFromTyped('OUTPUT', 'INT32', [1], Int32Array.of(v + acc));
        return { id: r.id, model: 'seq', version: 1, outputs: [sum, { ...sum, name: 'ACC_OUT' }] };
      }),
    );
  }

  it("feeds each request the state its sequence's previous request produced, from zeros at START", async () => {
    const inst = manualInstance();
    const { s } = scheduler(seqConfig(0, STATE), [inst]);
    const outs = [
      settle(s.enqueue(req(false, 1, 5, { start: true }))),
      settle(s.enqueue(req(false, 1, 6))),
      settle(s.enqueue(req(false, 1, 7, { end: true }))),
      settle(s.enqueue(req(false, 1, 100, { start: true, end: true }))),
    ];
    for (let i = 0; i < 4; i++) {
      await flush();
      // The model is asked for the state output beside the client's outputs.
      expect(inst.calls[i]!.batch[0]!.outputs?.map((o) => o.name)).toEqual(['OUTPUT', 'ACC_OUT']);
      accumulate(inst.calls[i]!);
    }
    await flush();
    expect(outs.map((o) => value(o.value))).toEqual([5, 11, 18, 100]);
    // The state output is not a config output: the client never sees it.
    expect(outs[0]!.value!.outputs.map((o) => o.name)).toEqual(['OUTPUT']);
  });
});

describe('sequence batcher: oldest strategy', () => {
  it('batches the next request of each sequence, one request per sequence in flight', async () => {
    const inst = manualInstance();
    const { s, clock } = scheduler(seqConfig(4, `oldest { max_candidate_sequences: 4 max_queue_delay_microseconds: 1000 preferred_batch_size: [ 2 ] } ${CONTROLS}`), [inst]);
    const a1 = settle(s.enqueue(req(true, 1, 1, { start: true })));
    const a2 = settle(s.enqueue(req(true, 1, 2, { end: true })));
    await flush();
    expect(inst.calls).toHaveLength(0); // waiting for a preferred batch of 2 (or the delay)
    const b1 = settle(s.enqueue(req(true, 2, 10, { start: true, end: true })));
    await flush();
    expect(rows(inst.calls[0]!).map((r) => [r['CORRID'], r['INPUT']])).toEqual([
      [1n, 1],
      [2n, 10],
    ]);
    answer(inst.calls[0]!);
    await flush();
    clock.advance(1000);
    await flush();
    expect(rows(inst.calls[1]!)).toEqual([{ INPUT: 2, START: 0, END: 1, READY: 1, CORRID: 1n }]);
    answer(inst.calls[1]!);
    await flush();
    expect([a1, a2, b1].map((o) => value(o.value))).toEqual([1, 2, 10]);
  });
});

describe('sequence batcher: stop', () => {
  it('refuses new sequences after stop, finishes queued requests, then resolves', async () => {
    const inst = manualInstance();
    const { s } = scheduler(seqConfig(0, CONTROLS), [inst]);
    const first = settle(s.enqueue(req(false, 1, 1, { start: true })));
    await flush();
    const stopped = settle((s as Scheduler).stop());
    const refused = settle(s.enqueue(req(false, 2, 1, { start: true })));
    await flush();
    expect(refused.error?.message).toBe('Server is stopping, scheduler for model has stopped accepting new inference requests');
    expect(stopped.done).toBe(false);
    answer(inst.calls[0]!);
    await flush();
    expect(value(first.value)).toBe(1);
    expect(stopped.done).toBe(true);
  });
});
