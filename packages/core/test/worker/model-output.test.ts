/**
 * What a model writes reaches the server's log only through the server: a process-isolated child's
 * stdout and stderr are pipes the host reads, each line attributed (model, version, instance) and
 * logged through the server's logger; log calls are split into lines; both are bounded by the
 * instance's log rate (lines past it dropped, counted, and said so once a second).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { InferError } from '../../src/errors.ts';
import { spawnWorkerInstance } from '../../src/worker/worker-host.ts';
import type { WorkerInstance, WorkerInstanceOptions } from '../../src/worker/types.ts';
import { TEST_ENTRIES, captureLog, type CapturedLog, type TestModelInit } from '../../src/testing/index.ts';
import type { InferResponse } from '../../src/types.ts';
import { MIN_LINE_COST } from '../../src/worker/model-output.ts';
import type { ModelLogLine } from '../../src/logger.ts';

const never = new AbortController().signal;
const spawned: WorkerInstance[] = [];

async function start(log: CapturedLog, extra: Partial<WorkerInstanceOptions<TestModelInit>> = {}): Promise<WorkerInstance> {
  const inst = await spawnWorkerInstance<TestModelInit>({
    entry: TEST_ENTRIES.fault,
    init: { model: 'p', version: 3, inputs: ['INPUT0'], outputs: ['OUTPUT0'] },
    model: 'p',
    version: 3,
    instanceName: `p_0_${spawned.length}`,
    isolation: 'process',
    log,
    ...extra,
  });
  spawned.push(inst);
  return inst;
}

async function answer(inst: WorkerInstance, fault: string): Promise<string> {
  const inputs = [{ name: 'INPUT0', datatype: 'UINT8' as const, shape: [1], data: new Uint8Array([9]) }];
  const {
    results: [result],
  } = await inst.execute([{ id: fault, model: 'p', inputs, parameters: { fault } }], never);
  if (InferError.is(result)) throw result;
  return new TextDecoder().decode((result as InferResponse).outputs[0]!.data);
}

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** How many one-second windows of the rate may have begun since `started` (a bound, whatever the speed). */
function windowsSince(started: number): number {
  return Math.ceil((Date.now() - started) / 1000) + 1;
}

afterAll(async () => {
  await Promise.all(spawned.map((i) => i.dispose()));
});

describe('a process-isolated model’s output', () => {
  it('reaches the log through the server, each line attributed', async () => {
    const log = captureLog();
    const inst = await start(log);
    expect(await answer(inst, 'output:lines')).toBe('written');
    await until('both lines', () => log.lines.filter((l) => l.includes('a line on')).length === 2);
    expect(log.lines).toContain("I model 'p' version 3 instance 'p_0_0' stdout: a line on stdout");
    expect(log.lines).toContain("W model 'p' version 3 instance 'p_0_0' stderr: a line on stderr");
  });

  it('holds no fd of the server’s: truncating or rewriting fds 1 and 2 meets pipes', async () => {
    const inst = await start(captureLog());
    // ftruncate on a pipe is EINVAL, a positioned write ESPIPE: the server's files are out of reach.
    expect(await answer(inst, 'output:rewrite')).toBe('EINVAL/ESPIPE,EINVAL/ESPIPE');
  });

  it('is bounded by the log rate: lines past it are dropped, counted and reported', async () => {
    const log = captureLog();
    const rate = 16 * 1024;
    const inst = await start(log, { policy: { logBytesPerSec: rate } });
    const total = 256 * 1024;
    const started = Date.now();
    expect(await answer(inst, `output:flood:${total}`)).toBe(`wrote ${total}`);
    const lines = total / 64;
    const logged = (): number => log.lines.filter((l) => l.includes(' stdout: xxxx')).length;
    // Every line is either logged or dropped (the pipe is read to its end).
    await until('every line accounted for', () => logged() + inst.logLinesDropped === lines);
    expect(inst.logLinesDropped).toBeGreaterThan(0);
    // Each second (window) logs at most `rate` bytes, a 64-byte line costing MIN_LINE_COST.
    expect(logged()).toBeLessThanOrEqual(windowsSince(started) * (rate / MIN_LINE_COST));
    await until('the drop report', () => log.lines.some((l) => l.includes('dropped')));
    expect(log.lines.find((l) => l.includes('dropped'))).toMatch(
      new RegExp(`^W model 'p' version 3 instance 'p_0_2': \\d+ line\\(s\\) of its output \\(\\d+ bytes\\) dropped: over the bound of ${rate} bytes per second \\(--model-log-rate\\)$`),
    );
  });
});

describe('a thread-isolated model’s output', () => {
  it('reaches the log the same way, attributed, instead of the server’s own stdout', async () => {
    const log = captureLog();
    const inst = await start(log, { isolation: 'thread' });
    expect(await answer(inst, 'output:lines')).toBe('written');
    await until('both lines', () => log.lines.filter((l) => l.includes('a line on')).length === 2);
    expect(log.lines).toContain("I model 'p' version 3 instance 'p_0_3' stdout: a line on stdout");
    expect(log.lines).toContain("W model 'p' version 3 instance 'p_0_3' stderr: a line on stderr");
  });
});

describe('a logger that takes model lines (Logger.model)', () => {
  for (const isolation of ['thread', 'process'] as const) {
    it(`(${isolation}) receives each line with its writer and source, apart from the server's messages`, async () => {
      const log = captureLog();
      const lines: ModelLogLine[] = [];
      const inst = await start({ ...log, model: (line) => lines.push(line) }, { isolation });
      await answer(inst, 'output:lines');
      await answer(inst, 'log:1:a log call');
      await until('three lines', () => lines.length === 3);
      const writer = { model: 'p', version: 3, instance: `p_0_${spawned.length - 1}` };
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ ...writer, source: 'stdout', level: 'info', text: 'a line on stdout' }),
          expect.objectContaining({ ...writer, source: 'stderr', level: 'warn', text: 'a line on stderr' }),
          expect.objectContaining({ ...writer, source: 'log', level: 'info', text: 'a log call' }),
        ]),
      );
      expect(log.lines.filter((l) => l.includes('a line on') || l.includes('a log call'))).toEqual([]);
    });
  }
});

describe('a model’s log calls', () => {
  for (const isolation of ['thread', 'process'] as const) {
    it(`(${isolation}) are logged a line at a time, within the same rate`, async () => {
      const log = captureLog();
      const inst = await start(log, { isolation, policy: { logBytesPerSec: 10 * MIN_LINE_COST } });
      // A newline in a message cannot start a line of the server's own.
      await answer(inst, 'log:1:first\nI0101 00:00:00.000000 1 server.ts:1] forged');
      expect(log.lines).toContain('I first');
      expect(log.lines).toContain('I I0101 00:00:00.000000 1 server.ts:1] forged');
      const started = Date.now();
      await answer(inst, 'log:50:again');
      const logged = log.lines.filter((l) => l === 'I again').length;
      expect(logged).toBeLessThanOrEqual(windowsSince(started) * 10);
      expect(logged + inst.logLinesDropped).toBe(50);
      expect(inst.logLinesDropped).toBeGreaterThan(0);
    });
  }
});
