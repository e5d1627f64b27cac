/**
 * A client that goes away cancels a decoupled request whose execute already returned: the example
 * `repeat` backend keeps sending from timers after its execute resolves (Triton's response factory
 * outliving the execute). Cancelling the gRPC stream, or leaving an HTTP generate_stream, must reach
 * it: the request ends CANCELLED (in the model's statistics) instead of running to its last delay,
 * 10 minutes away. (That the worker
 * then stops the model's timers is tested at the backend, in backend-examples' example-backends.test.ts.)
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client, credentials } from '@grpc/grpc-js';
import { encodeInferRequest } from '@tritium/client/proto';
import { exampleBackends } from '@tritium/backend-examples';
import { startTestServerWith, type TestServer } from './support/start-server.ts';

const REPEAT = `name: "repeat_int32"
backend: "repeat"
max_batch_size: 0
model_transaction_policy { decoupled: True }
instance_group [{ count: 1, kind: KIND_CPU }]
input [
  { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] },
  { name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] }
]
output [
  { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] },
  { name: "IDX" data_type: TYPE_UINT32 dims: [ 1 ] }
]
`;

let repo: string;
let t: TestServer;
beforeAll(async () => {
  repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-decoupled-cancel-'));
  mkdirSync(path.join(repo, 'repeat_int32', '1'), { recursive: true });
  writeFileSync(path.join(repo, 'repeat_int32', 'config.pbtxt'), REPEAT);
  t = await startTestServerWith({ modelRepositories: [repo] }, exampleBackends());
}, 60_000);
afterAll(async () => {
  await t?.close();
  rmSync(repo, { recursive: true, force: true });
});

/** One ModelStreamInfer request for repeat_int32 (raw contents, little-endian as on the wire). */
function repeatRequest(id: string, values: number[], delaysMs: number[], waitMs: number): Buffer {
  const tensor = (name: string, datatype: string, n: number) => ({ name, datatype, shape: [n], parameters: {} });
  return encodeInferRequest({
    model_name: 'repeat_int32',
    model_version: '',
    id,
    parameters: {},
    inputs: [tensor('IN', 'INT32', values.length), tensor('DELAY', 'UINT32', delaysMs.length), tensor('WAIT', 'UINT32', 1)],
    outputs: [],
    raw_input_contents: [
      new Uint8Array(Int32Array.from(values).buffer),
      new Uint8Array(Uint32Array.from(delaysMs).buffer),
      new Uint8Array(Uint32Array.of(waitMs).buffer),
    ],
  });
}

async function stats(): Promise<{ success: number; fail: number }> {
  const { model_stats } = await t.grpc.getInferenceStatistics('repeat_int32');
  const s = model_stats[0].inference_stats!;
  return { success: Number(s.success?.count), fail: Number(s.fail?.count) };
}

it('cancelling the gRPC stream ends a repeat still sending after its execute returned', async () => {
  const client = new Client(t.grpcUrl, credentials.createInsecure());
  const stream = client.makeBidiStreamRequest('/inference.GRPCInferenceService/ModelStreamInfer', (b: Buffer) => b, (b: Buffer) => b);
  const first = new Promise<void>((resolve) => stream.once('data', () => resolve()));
  stream.on('error', () => {});
  stream.write(repeatRequest('long', [1, 2], [0, 600_000], 0));
  await first;
  expect(await stats()).toEqual({ success: 0, fail: 0 });
  stream.cancel();
  // Nothing else can end this request within the test's time: its second response is 10 minutes away.
  while ((await stats()).fail === 0) await new Promise((r) => setTimeout(r, 20));
  expect(await stats()).toEqual({ success: 0, fail: 1 });
  // Triton's response statistics: the first response sent, the second cancelled.
  const { model_stats } = await t.grpc.getInferenceStatistics('repeat_int32');
  const responses = model_stats[0].response_stats as Record<string, { success: { count: unknown }; cancel: { count: unknown } }>;
  expect([Number(responses['0']!.success.count), Number(responses['1']!.cancel.count)]).toEqual([1, 1]);
  client.close();
}, 60_000);

it('a client leaving generate_stream (HTTP) ends the same request', async () => {
  const before = await stats();
  const body = JSON.stringify({ IN: [1, 2], DELAY: [0, 600_000], WAIT: [0] });
  const aborted = new AbortController();
  const res = await fetch(`http://${t.httpUrl}/v2/models/repeat_int32/generate_stream`, { method: 'POST', body, signal: aborted.signal });
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  expect(res.status).toBe(200);
  expect(new TextDecoder().decode(value)).toContain('"OUT":1,"IDX":0');
  aborted.abort();
  while ((await stats()).fail === before.fail) await new Promise((r) => setTimeout(r, 20));
  expect(await stats()).toEqual({ success: before.success, fail: before.fail + 1 });
}, 60_000);
