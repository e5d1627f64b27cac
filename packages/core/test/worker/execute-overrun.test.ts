/**
 * A hung execute is never silent: past `executeWarnMs` it is logged with model, instance and
 * elapsed time and counted in `executeOverruns` (Prometheus `tritium_execute_overrun_total`).
 */
import { afterAll, expect, it } from 'vitest';
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
  await inst.execute([req('ok')], never);
  expect(inst.executeOverruns).toBe(0);
  await inst.execute([req('delay:400')], never);
  expect(inst.executeOverruns).toBe(1);
  const lines = log.lines.join('\n');
  expect(lines).toMatch(/model 'm' instance 'm_0_0': execute of 1 request\(s\) still running after \d+ ms \(warn threshold 50 ms; no execute timeout set\)/);
  expect(lines).toMatch(/model 'm' instance 'm_0_0': execute that overran ended after \d+ ms/);
});
