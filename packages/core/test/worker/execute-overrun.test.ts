/**
 * A hung execute is never silent: past `executeWarnMs` it is logged with model, instance and
 * elapsed time and counted in `executeOverruns` (Prometheus `tritium_execute_overrun_total`).
 *
 * The threshold is the host's own timer on this thread, so the test drives it with fake timers
 * (the worker keeps real time): an execute overruns exactly when the test moves the clock past the
 * threshold while it runs, whatever the machine's load. Real timers made the quick execute overrun
 * too on a loaded machine.
 */
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { spawnWorkerInstance } from '../../src/worker/worker-host.ts';
import type { WorkerInstance } from '../../src/worker/types.ts';
import { TEST_ENTRIES, type TestModelInit } from '../../src/testing/index.ts';
import { captureLog } from '../../src/testing/capture-log.ts';
import type { InferRequest } from '../../src/types.ts';

const never = new AbortController().signal;
const req = (fault: string): InferRequest => ({
  id: fault,
  model: 'm',
  inputs: [{ name: 'INPUT0', datatype: 'UINT8', shape: [1], data: new Uint8Array([1]) }],
  parameters: { fault },
});

let inst: WorkerInstance | undefined;
afterEach(() => vi.useRealTimers());
afterAll(() => inst?.dispose());

it('logs and counts an execute that runs past executeWarnMs, and again when it ends', async () => {
  const log = captureLog();
  inst = await spawnWorkerInstance<TestModelInit>({
    entry: TEST_ENTRIES.fault,
    init: { model: 'm', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'] },
    model: 'm',
    instanceName: 'm_0_0',
    executeWarnMs: 50,
    log,
  });
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  // Ends before the clock reaches the threshold: not an overrun.
  await inst.execute([req('ok')], never);
  expect(inst.executeOverruns).toBe(0);
  expect(log.lines.filter((l) => l.includes('execute'))).toEqual([]);

  // Runs (in the worker, for 10 minutes of real time) until cancelled; the clock passes 50 ms meanwhile.
  const cancel = new AbortController();
  const running = inst.execute([req('delay:600000')], cancel.signal).catch((e: unknown) => e);
  // The execute's timer is armed once it reaches the worker: move the clock until it fires.
  while (inst.executeOverruns === 0) await vi.advanceTimersByTimeAsync(50);
  expect(inst.executeOverruns).toBe(1);
  expect(log.lines.join('\n')).toMatch(
    /model 'm' instance 'm_0_0': execute of 1 request\(s\) still running after \d+ ms \(warn threshold 50 ms; no execute timeout set\)/,
  );
  expect(log.lines.join('\n')).not.toMatch(/execute that overran ended/);
  cancel.abort();
  await running;
  expect(log.lines.join('\n')).toMatch(/model 'm' instance 'm_0_0': execute that overran ended after \d+ ms/);
  // Counted once, however long it ran.
  await vi.advanceTimersByTimeAsync(1000);
  expect(inst.executeOverruns).toBe(1);
});
