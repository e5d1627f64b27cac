/**
 * Back-pressure of a decoupled model's responses across the worker boundary (sink-flow.ts): while
 * the host's sink holds a response (its reader is full), the worker sends at most a window of them,
 * then its sender waits; when the reader takes them, the rest follow in order and the completion
 * last; a cancelled execute fails the waiting send; a worker that ignores the window is a crash.
 */
import { describe, expect, it } from 'vitest';
import { spawnWorkerInstance } from '../../src/worker/worker-host.ts';
import { HostSinkFlow, RESPONSE_OVERHEAD_BYTES, SINK_ACK_BYTES, SINK_WINDOW_BYTES, WorkerSinkFlow } from '../../src/worker/sink-flow.ts';
import { TEST_ENTRIES } from '../../src/testing/index.ts';
import { InferError } from '../../src/errors.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../../src/types.ts';
import type { WorkerInstance } from '../../src/worker/types.ts';

const MIB = 1 << 20;
const response = (bytes: number): InferResponse => ({ id: '1', model: 'd', version: 1, outputs: [{ name: 'P', datatype: 'UINT8', shape: [bytes], data: new Uint8Array(bytes) }] });

describe('the window, on each side', () => {
  it('the worker sends while under the window, holds the rest, completes after them, and fails them once dropped', async () => {
    const posted: number[] = [];
    const flow = new WorkerSinkFlow((r) => posted.push(r.outputs[0]!.data.byteLength));
    expect(flow.response(response(3 * MIB))).toBeUndefined();
    expect(flow.response(response(2 * MIB))).toBeUndefined(); // 3 MiB unacknowledged: still under 4
    const third = flow.response(response(MIB))!;
    expect(third).toBeInstanceOf(Promise);
    let finished = false;
    flow.whenSent(() => (finished = true));
    expect([posted.length, finished]).toEqual([2, false]);
    flow.acked(3 * MIB + RESPONSE_OVERHEAD_BYTES);
    await third;
    expect([posted, finished]).toEqual([[3 * MIB, 2 * MIB, MIB], true]);
    const held = new WorkerSinkFlow(() => undefined);
    held.response(response(SINK_WINDOW_BYTES));
    const waiting = held.response(response(1))!;
    const error = new InferError('CANCELLED', 'gone');
    held.drop(error);
    await expect(waiting).rejects.toBe(error);
    await expect(held.response(response(1))).rejects.toBe(error);
  });

  it('the host acknowledges in steps and refuses a response past the window', () => {
    const flow = new HostSinkFlow(1);
    expect(flow.received(0, SINK_ACK_BYTES - 1)).toBe(true);
    expect(flow.took(0, SINK_ACK_BYTES - 1)).toBe(0);
    expect(flow.received(0, SINK_WINDOW_BYTES)).toBe(true);
    expect(flow.received(0, 1)).toBe(false); // the worker had a full window unacknowledged
    expect(flow.took(0, SINK_WINDOW_BYTES)).toBe(SINK_WINDOW_BYTES + SINK_ACK_BYTES - 1);
    expect(flow.received(0, 1)).toBe(true);
  });
});

function request(id: string, parameters: Record<string, string | number | boolean>): InferRequest {
  return { id, model: 'd', inputs: [], parameters };
}

/** A sink whose reader is full until `release()`; records what reaches it. */
function gatedSink(): { sink: ResponseSink; got: string[]; release(): void; done: Promise<void> } {
  const got: string[] = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  return {
    got,
    release: () => open(),
    done,
    sink: {
      response: (r) => {
        got.push(String(new Int32Array(r.outputs[0]!.data.slice().buffer)[0]));
        return gate;
      },
      complete: (e) => {
        got.push(e ? `error:${e.code}:${e.message}` : 'done');
        finished();
      },
    },
  };
}

async function until(log: string[], line: string): Promise<void> {
  for (let i = 0; i < 1000 && !log.some((l) => l.includes(line)); i++) await new Promise((done) => setTimeout(done, 10));
  expect(log.join('\n')).toContain(line);
}

function spawn(isolation: 'thread' | 'process', logs: string[]): Promise<WorkerInstance> {
  return spawnWorkerInstance({
    entry: TEST_ENTRIES.decoupled,
    init: null,
    model: 'd',
    instanceName: 'd_0_0',
    isolation,
    log: { error: (m) => logs.push(m), warn: (m) => logs.push(m), info: (m) => logs.push(m), verbose: () => {} },
  });
}

for (const isolation of ['thread', 'process'] as const) {
  describe(`back-pressure through a worker (${isolation})`, () => {
    it('a full reader stops the sender after a window of responses; released, the rest arrive in order, then the completion', async () => {
      const logs: string[] = [];
      const inst = await spawn(isolation, logs);
      try {
        const s = gatedSink();
        await inst.executeDecoupled!([request('r', { count: 20, payload: MIB, paced: true })], [s.sink], new AbortController().signal);
        // The log line travels behind the responses sent before it: the host has them all now.
        await until(logs, 'request r: waiting at 4');
        expect(s.got).toEqual(['0', '1', '2', '3']);
        s.release();
        await s.done;
        expect(s.got).toEqual([...Array.from({ length: 20 }, (_, k) => String(k)), 'done']);
      } finally {
        await inst.dispose();
      }
    }, 30_000);

    it('a cancelled request fails the send that waits, so the sender stops', async () => {
      const logs: string[] = [];
      const inst = await spawn(isolation, logs);
      try {
        const s = gatedSink();
        const abort = new AbortController();
        await inst.executeDecoupled!([request('c', { count: 20, payload: MIB, paced: true })], [s.sink], abort.signal);
        await until(logs, 'request c: waiting at 4');
        abort.abort();
        await until(logs, 'request c: stopped at 4: Unable to send response: the request was cancelled.');
      } finally {
        await inst.dispose();
      }
    }, 30_000);

    it('a worker that sends past its window is ended as a crash naming it', async () => {
      const logs: string[] = [];
      const inst = await spawn(isolation, logs);
      try {
        const s = gatedSink();
        // A fresh instance's first execute is id 1; the forged responses come before its result.
        const execute = inst.executeDecoupled!([request('f', { forge_window: 1 })], [s.sink], new AbortController().signal);
        await expect(execute).rejects.toThrow(
          `model 'd' instance 'd_0_0' crashed: worker sent a malformed 'sink' message: it sent a response for request 0 past its window of ${SINK_WINDOW_BYTES} bytes`,
        );
        expect(s.got).toHaveLength(4);
      } finally {
        await inst.dispose();
      }
    }, 30_000);
  });
}
