import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferError, type InferRequest, type InferResponse } from '@tritium/core';
import { executeDecoupledToEnd } from '@tritium/core/backend';
import { asFloat32, asInt32, fp32, int32, loadFixture, ok, request, run, type Loaded } from './helpers.ts';

describe('BLS: InferenceRequest.exec() from inside execute', () => {
  const loaded: Record<string, Loaded> = {};
  /** Routes BLS calls to the loaded fixtures, as InferenceServer.infer would (one instance each). */
  const router = async (r: InferRequest): Promise<InferResponse> => {
    const target = loaded[r.model];
    if (!target) throw new InferError('NOT_FOUND', `Request for unknown model: '${r.model}' is not found`);
    const [result] = await run(target.instances[0]!, [r]);
    if (!result || InferError.is(result)) throw result ?? new InferError('INTERNAL', 'no result');
    return result;
  };
  beforeAll(async () => {
    loaded['add_sub'] = await loadFixture('add_sub');
    loaded['bls_caller'] = await loadFixture('bls_caller', { infer: router });
  });
  afterAll(async () => {
    await Promise.all(Object.values(loaded).map((l) => l.dispose()));
  });

  it('calls another model and returns its output', async () => {
    const [r] = await run(loaded['bls_caller']!.instances[0]!, [
      request('bls_caller', 'a', [fp32('INPUT0', [1, 2, 3, 4]), fp32('INPUT1', [1, 1, 1, 1])], { target: 'add_sub' }),
    ]);
    expect(asFloat32(ok(r).outputs[0])).toEqual([2, 3, 4, 5]);
  });

  it('a failed call comes back as an error response (Triton: check has_error())', async () => {
    const [r] = await run(loaded['bls_caller']!.instances[0]!, [
      request('bls_caller', 'a', [fp32('INPUT0', [1, 2, 3, 4]), fp32('INPUT1', [1, 1, 1, 1])], { target: 'nope' }),
    ]);
    expect(r).toMatchObject({ code: 'NOT_FOUND', message: "Request for unknown model: 'nope' is not found" });
  });
});

describe('decoupled models: the response sender', () => {
  let repeat: Loaded;
  beforeAll(async () => {
    repeat = await loadFixture('repeat');
  });
  afterAll(async () => {
    await repeat?.dispose();
  });

  it('BLS to a decoupled model iterates over its streamed responses', async () => {
    const streamer = await loadFixture('bls_stream', {
      inferStream: (r, sink) => {
        void repeat.instances[0]!.executeDecoupled!([r], [sink], new AbortController().signal).catch((e: InferError) => sink.complete(e));
      },
    });
    try {
      const [r] = await run(streamer.instances[0]!, [request('bls_stream', 'a', [int32('IN', [3, 4, 5], [3])])]);
      expect(asInt32(ok(r).outputs[0])).toEqual([3, 12, 4]);
    } finally {
      await streamer.dispose();
    }
  });

  function collect() {
    const got: { responses: InferResponse[]; done?: InferError | true } = { responses: [] };
    return {
      got,
      sink: {
        response: (r: InferResponse) => void got.responses.push(r),
        complete: (e?: InferError) => {
          got.done = e ?? true;
        },
      },
    };
  }

  it('streams 0..n responses per request, then the final flag; the call returns when execute does', async () => {
    const a = collect();
    const b = collect();
    await repeat.instances[0]!.executeDecoupled!(
      [request('repeat', 'a', [int32('IN', [4, 5, 6], [3])]), request('repeat', 'b', [int32('IN', [], [0])])],
      [a.sink, b.sink],
      new AbortController().signal,
    );
    // The responses were sent before execute returned; the model sends its final flags from a timer
    // after that (as Triton allows), and the instance was free meanwhile.
    expect(a.got.responses.map((r) => asInt32(r.outputs[0]))).toEqual([[4], [5], [6]]);
    expect(a.got.done).toBeUndefined();
    await vi.waitFor(() => expect([a.got.done, b.got.done]).toEqual([true, true]));
    expect(b.got.responses).toEqual([]);
  });

  it('executeDecoupledToEnd waits for every final flag', async () => {
    const a = collect();
    await executeDecoupledToEnd(repeat.instances[0]!, [request('repeat', 'a', [int32('IN', [7], [1])])], [a.sink], new AbortController().signal);
    expect(a.got.responses.map((r) => asInt32(r.outputs[0]))).toEqual([[7]]);
    expect(a.got.done).toBe(true);
  });

  it('a non-streaming call gets the single response, or an error saying to stream', async () => {
    const [one, many] = await run(repeat.instances[0]!, [request('repeat', 'a', [int32('IN', [9], [1])]), request('repeat', 'b', [int32('IN', [1, 2], [2])])]);
    expect(asInt32(ok(one).outputs[0])).toEqual([9]);
    expect(many).toMatchObject({
      code: 'INVALID_ARG',
      message: "model 'repeat' is decoupled and sent 2 responses to a request that takes one; use a streaming request (ModelStreamInfer)",
    });
  });

  it("execute returning a value is Triton's error", async () => {
    const a = collect();
    await repeat.instances[0]!.executeDecoupled!(
      [request('repeat', 'a', [int32('IN', [1], [1])], { mode: 'return' })],
      [a.sink],
      new AbortController().signal,
    );
    expect(a.got.done).toMatchObject({
      code: 'INTERNAL',
      message: "Python model 'repeat' is using the decoupled mode and the execute function must return None.",
    });
  });
});
