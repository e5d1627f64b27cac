/**
 * Poison isolation through crashes, with real model.ts workers under thread and process isolation:
 * a request whose input makes the model call process.exit fails alone, with the crash's cause, and
 * the other requests of its batch are re-run alone and succeed; a decoupled request that already
 * streamed a response is not re-run (it would stream it twice), one that streamed nothing is.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError, InferenceServer, typedView, type InferResponse } from '@tritium/core';
import { pythonLikeBackend } from '../src/index.ts';
import { int32 } from './helpers.ts';

const POISON = 666;

// Exits while running a batch that holds the poison value, as a native library crashing on one input would.
const CRASHY = `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => {
      const x = getInputTensorByName(r, 'X')!.data as Int32Array;
      if (x[0] === ${POISON}) process.exit(7);
      return new InferenceResponse({ outputTensors: [new Tensor('Y', Int32Array.from(x), [1, 1])] });
    });
  }
}
`;

// Decoupled: streams one response per request in batch order, exiting at the poison. Before it
// exits it makes a BLS call: the host reads its channel in order, so the answer means the host
// holds every response streamed before it.
const STREAMING = `import { InferenceRequest, InferenceResponse, Tensor, TRITONSERVER_RESPONSE_COMPLETE_FINAL, getInputTensorByName } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]) {
    for (const r of requests) {
      const x = getInputTensorByName(r, 'X')!.data as Int32Array;
      if (x[0] === ${POISON}) {
        await new InferenceRequest({ modelName: 'barrier', inputs: [new Tensor('X', Int32Array.of(1), [1])], requestedOutputNames: ['Y'] }).exec();
        process.exit(7);
      }
      r.getResponseSender().send(new InferenceResponse({ outputTensors: [new Tensor('Y', Int32Array.from(x), [1, 1])] }));
    }
    for (const r of requests) r.getResponseSender().send(undefined, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
    return undefined;
  }
}
`;

const BARRIER = `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse({ outputTensors: [new Tensor('Y', Int32Array.from(getInputTensorByName(r, 'X')!.data as Int32Array), [1])] }));
  }
}
`;

const ISOLATIONS = ['thread', 'process'] as const;
const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-pl-crash-'));

function writeModel(name: string, source: string, config: string): void {
  mkdirSync(path.join(repo, name, '1'), { recursive: true });
  writeFileSync(path.join(repo, name, 'config.pbtxt'), `name: "${name}"\nbackend: "python"\n${config}`);
  writeFileSync(path.join(repo, name, '1', 'model.ts'), source);
}

const IO = `input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
`;
for (const isolation of ISOLATIONS) {
  const params = `parameters { key: "tritium.isolation" value: { string_value: "${isolation}" } }\n`;
  // A batch forms when its preferred size is queued (the queue delay is only a backstop).
  writeModel(`crashy_${isolation}`, CRASHY, `max_batch_size: 8\n${IO}dynamic_batching { preferred_batch_size: [ 8 ] max_queue_delay_microseconds: 5000000 }\n${params}`);
  writeModel(
    `streaming_${isolation}`,
    STREAMING,
    `max_batch_size: 8\nmodel_transaction_policy { decoupled: true }\n${IO}dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 5000000 }\n${params}`,
  );
}
writeModel('barrier', BARRIER, `max_batch_size: 0\n${IO}`);

let server: InferenceServer;
beforeAll(async () => {
  server = new InferenceServer({ repositories: [repo], backends: [pythonLikeBackend({ restart: { initialBackoffMs: 10 } })] });
  await server.start();
});
afterAll(async () => {
  await server?.stop();
  rmSync(repo, { recursive: true, force: true });
});

const valueOf = (r: InferResponse): number => (typedView(r.outputs[0]!) as Int32Array)[0]!;
const CRASH = /^model 'crashy_\w+' instance 'crashy_\w+' crashed: worker exited with code 7$/;

describe.each(ISOLATIONS)('%s isolation', (isolation) => {
  it('8 requests batched with one that makes model.ts exit: the 7 others succeed, it fails alone with the crash cause', async () => {
    const model = `crashy_${isolation}`;
    const values = [1, 2, 3, POISON, 5, 6, 7, 8];
    const outcomes = await Promise.all(
      values.map((v, i) =>
        server.infer({ id: `r${i}`, model, inputs: [int32('X', [v], [1, 1])] }).then(
          (r) => valueOf(r),
          (e: unknown) => e as InferError,
        ),
      ),
    );
    expect(outcomes.filter((o) => typeof o === 'number')).toEqual([1, 2, 3, 5, 6, 7, 8]);
    const failed = outcomes[3];
    expect(InferError.is(failed) && failed.code).toBe('INTERNAL');
    expect((failed as InferError).message).toMatch(CRASH);
    const metrics = server.metrics().find((m) => m.model === model)!;
    expect({ retries: metrics.crashRetries, poison: metrics.poisonRequests }).toEqual({ retries: 8, poison: 1 });
    expect(server.modelReady(model)).toBe(true);
  });

  it('decoupled: a request that streamed a response is not re-run, one that streamed nothing is', async () => {
    const model = `streaming_${isolation}`;
    const values = [10, POISON, 12, 13];
    const streams = await Promise.all(
      values.map(
        (v, i) =>
          new Promise<{ values: number[]; error?: string }>((resolve) => {
            const got: number[] = [];
            server.inferStream(
              { id: `s${i}`, model, inputs: [int32('X', [v], [1, 1])] },
              { response: (r) => void got.push(valueOf(r)), complete: (e) => resolve({ values: got, ...(e ? { error: e.message } : {}) }) },
            );
          }),
      ),
    );
    const crash = `model '${model}' instance '${model}_0' crashed: worker exited with code 7`;
    expect(streams).toEqual([{ values: [10], error: crash }, { values: [], error: crash }, { values: [12] }, { values: [13] }]);
    const metrics = server.metrics().find((m) => m.model === model)!;
    expect({ retries: metrics.crashRetries, poison: metrics.poisonRequests }).toEqual({ retries: 3, poison: 1 });
  });
});
