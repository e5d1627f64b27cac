/**
 * Timings travel with the execute they belong to (issue 12 item 5). A decoupled model answers its
 * requests before its execute returns; the statistics of those requests must carry that execute's
 * own timings, not whatever the instance reported last. Real worker threads.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferError } from '../../src/index.ts';
import { createScheduler } from '../../src/scheduler/index.ts';
import { spawnWorkerInstance } from '../../src/worker/index.ts';
import type { InferRequest, InferResponse } from '../../src/index.ts';
import type { Scheduler, StatsRecorder } from '../../src/scheduler/index.ts';
import type { WorkerInstance } from '../../src/worker/index.ts';
import { TEST_ENTRIES } from '../../src/testing/index.ts';
import { config, input } from './helpers.ts';

describe('execute timings', () => {
  let instance: WorkerInstance;
  beforeAll(async () => {
    instance = await spawnWorkerInstance<null>({
      entry: TEST_ENTRIES.decoupled,
      init: null,
      model: 'repeat',
      instanceName: 'repeat_0',
    });
  });
  afterAll(() => instance.dispose());

  function stream(scheduler: Scheduler, request: InferRequest): Promise<InferResponse[]> {
    return new Promise((resolve, reject) => {
      const got: InferResponse[] = [];
      scheduler.enqueueStream!(request, { response: (r) => void got.push(r), complete: (e?: InferError) => (e ? reject(e) : resolve(got)) });
    });
  }

  it('a decoupled execute charges its own timings to its own requests', async () => {
    const executions: number[] = [];
    const succeeded: number[] = [];
    const stats: StatsRecorder = {
      requestQueued() {},
      requestDequeued() {},
      execution: (_n, t) => void executions.push(t.computeInferNs),
      requestSucceeded: (_ns, d) => void succeeded.push(d.computeInferNs),
      requestFailed() {},
    };
    const scheduler = createScheduler(
      config({ name: 'repeat', input: [input('INPUT0', [1])], model_transaction_policy: { decoupled: true } }),
      { modelName: 'repeat', version: 1, instances: [instance], stats, infer: () => Promise.reject(new Error('unused')) },
    );
    const request = (id: string, inferNs: number): InferRequest => ({ id, model: 'repeat', inputs: [], parameters: { count: 2, infer_ns: inferNs } });
    expect(await stream(scheduler, request('a', 1000))).toHaveLength(2);
    expect(await stream(scheduler, request('b', 7000))).toHaveLength(2);
    // Requests are answered before their execute returns; its statistics follow when it does.
    await vi.waitFor(() => expect(executions).toHaveLength(2), { timeout: 10_000 });
    expect(executions).toEqual([1000, 7000]);
    expect(succeeded).toEqual([1000, 7000]);
    await scheduler.stop();
  });
});
