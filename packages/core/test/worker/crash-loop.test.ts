/**
 * A crash loop never ends in a permanent outage: after `maxRestarts` crashes in a row the instance
 * is down (every execute fails UNAVAILABLE at once with the last cause, `onUnavailable` hears it),
 * restarts go on with a doubling backoff capped at `maxBackoffMs`, and the first restart that works
 * brings it back (`onAvailable`). The fault model fails createInstance while a marker file exists.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
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
const dir = mkdtempSync(join(tmpdir(), 'tritium-crash-loop-'));
const marker = join(dir, 'broken');
let inst: WorkerInstance | undefined;
afterAll(async () => {
  await inst?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

it('goes down after maxRestarts crashes in a row, keeps retrying with a capped backoff, and comes back', async () => {
  const log = captureLog();
  const down: string[] = [];
  let up = 0;
  inst = await spawnWorkerInstance<TestModelInit>({
    entry: TEST_ENTRIES.fault,
    init: { model: 'm', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'], parameters: { fault_on_start: `fail-while:${marker}` } },
    model: 'm',
    instanceName: 'm_0',
    restart: { maxRestarts: 2, initialBackoffMs: 5, maxBackoffMs: 40 },
    onUnavailable: (reason) => down.push(reason),
    onAvailable: () => up++,
    log,
  });
  writeFileSync(marker, '');
  // The execute that crashes it, then two restarts that fail: three crashes in a row, one too many.
  await expect(inst.execute([req('exit')], never)).rejects.toMatchObject({ code: 'INTERNAL', message: "model 'm' instance 'm_0' crashed: worker exited with code 3" });
  await vi.waitFor(() => expect(down.length).toBeGreaterThan(0), { timeout: 30_000 });
  expect(down[0]).toBe(
    `model 'm' instance 'm_0' crashed 3 times in a row; last cause: createInstance failed on restart: fault backend: createInstance fails while ${marker} exists`,
  );
  expect(inst.healthy).toBe(false);
  // While down, an execute is answered at once with the cause; nobody waits on a crash loop.
  await expect(inst.execute([req('ok')], never)).rejects.toMatchObject({
    code: 'UNAVAILABLE',
    message: expect.stringMatching(/^model 'm' instance 'm_0' is unavailable: model 'm' instance 'm_0' crashed \d+ times in a row; last cause: /),
  });
  // It keeps trying (the reason is refreshed on each failed restart) and the backoff stops at the cap.
  await vi.waitFor(() => expect(down.length).toBeGreaterThanOrEqual(3), { timeout: 30_000 });
  expect(down.at(-1)).toMatch(/crashed ([5-9]|\d{2,}) times in a row/);
  expect(log.lines.join('\n')).toContain('; next restart in 40 ms');
  expect(log.lines.some((l) => /next restart in (\d+) ms/.test(l) && Number(/next restart in (\d+) ms/.exec(l)![1]) > 40)).toBe(false);
  expect(up).toBe(0);

  rmSync(marker);
  await vi.waitFor(() => expect(up).toBe(1), { timeout: 30_000 });
  expect(inst.healthy).toBe(true);
  const { results } = await inst.execute([req('ok')], never);
  expect(results[0]).toMatchObject({ outputs: [{ name: 'OUTPUT0' }] });
});

it('with keepTrying false, a down instance stops restarting (one-shot runs)', async () => {
  const once = await spawnWorkerInstance<TestModelInit>({
    entry: TEST_ENTRIES.fault,
    init: { model: 'm', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'] },
    model: 'm',
    instanceName: 'm_1',
    restart: { maxRestarts: 0, keepTrying: false },
  });
  try {
    await expect(once.execute([req('exit')], never)).rejects.toMatchObject({ code: 'INTERNAL' });
    await new Promise((r) => setTimeout(r, 300));
    expect(once.restarts).toBe(0);
    await expect(once.execute([req('ok')], never)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  } finally {
    await once.dispose();
  }
});
