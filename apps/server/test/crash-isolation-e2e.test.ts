/**
 * Poison isolation through crashes, seen by clients of a real `tritium serve`: a model.ts that calls
 * process.exit on one input value. 8 requests batched with one such request: the 7 others succeed,
 * it fails alone with the crash's cause. Then five such requests in a row while innocent traffic
 * flows: every innocent request succeeds (none 500 for sharing a batch, none 503 for a model taken
 * down), the model stays READY, and the server counts and logs what it isolated.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

const POISON = 666;
const MODEL_TS = `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
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
// A batch of 8 leaves the queue as soon as 8 are queued; fewer wait at most 100 ms.
const CONFIG = `name: "poisonable"
backend: "python"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
dynamic_batching { preferred_batch_size: [ 8 ] max_queue_delay_microseconds: 100000 }
`;
const CRASH = `model 'poisonable' instance 'poisonable_0' crashed: worker exited with code 7`;

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-crash-isolation-'));
let serve: ServeProcess;
let ports: { http: number; metrics: number };

beforeAll(async () => {
  mkdirSync(path.join(repo, 'poisonable', '1'), { recursive: true });
  writeFileSync(path.join(repo, 'poisonable', 'config.pbtxt'), CONFIG);
  writeFileSync(path.join(repo, 'poisonable', '1', 'model.ts'), MODEL_TS);
  serve = startServeProcess(['--model-repository', repo]);
  ports = await serve.started;
}, 60_000);
afterAll(async () => {
  await serve?.stop();
  rmSync(repo, { recursive: true, force: true });
});

/** One HTTP infer of X = `value`: its status and Y, or its error. */
async function infer(value: number): Promise<{ status: number; y?: number; error?: string }> {
  const res = await fetch(`http://127.0.0.1:${ports.http}/v2/models/poisonable/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ inputs: [{ name: 'X', datatype: 'INT32', shape: [1, 1], data: [value] }] }),
  });
  const body = (await res.json()) as { outputs?: { data: number[] }[]; error?: string };
  return body.error !== undefined ? { status: res.status, error: body.error } : { status: res.status, y: body.outputs![0]!.data[0]! };
}

it('8 requests batched with one that makes model.ts exit: 7 succeed, it fails alone with the crash cause', async () => {
  const values = [1, 2, 3, POISON, 5, 6, 7, 8];
  const outcomes = await Promise.all(values.map(infer));
  expect(outcomes).toEqual(values.map((v) => (v === POISON ? { status: 500, error: CRASH } : { status: 200, y: v })));
}, 60_000);

it('five such requests in a row do not take the model to 503: innocent traffic meanwhile all succeeds', async () => {
  const innocent: { status: number; error?: string }[] = [];
  let flowing = true;
  // Four clients in closed loops: their requests share batches with the poisoned ones.
  const clients = Array.from({ length: 4 }, async (_, c) => {
    for (let i = 0; flowing; i++) innocent.push(await infer(100 * c + (i % 100)));
  });
  const poisoned: { status: number; error?: string }[] = [];
  for (let i = 0; i < 5; i++) {
    poisoned.push(await infer(POISON));
    // Innocent traffic is served between two poisoned requests.
    const seen = innocent.length;
    while (innocent.length < seen + 4) await new Promise((r) => setTimeout(r, 10));
  }
  flowing = false;
  await Promise.all(clients);
  expect(poisoned).toEqual(Array.from({ length: 5 }, () => ({ status: 500, error: CRASH })));
  expect(innocent.filter((o) => o.status !== 200)).toEqual([]);
  expect((await fetch(`http://127.0.0.1:${ports.http}/v2/models/poisonable/ready`)).status).toBe(200);

  const metrics = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
  // The first test's poisoned request and these five.
  expect(metrics).toContain('tritium_inference_poison_request_total{model="poisonable",version="1"} 6\n');
  expect(Number(/^tritium_inference_crash_retry_total\{model="poisonable",version="1"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(8);
  expect(serve.log()).toMatch(/a request without an id crashed its instance running alone \(re-run after its batch crashed\); it fails alone as the cause: /);
  expect(serve.log()).not.toMatch(/crashed \d+ times in a row/);
}, 120_000);
