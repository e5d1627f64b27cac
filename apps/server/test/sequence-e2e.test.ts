/**
 * Sequence batching end to end: `model.ts` sequence models in real workers behind the HTTP and gRPC
 * transports, many clients running interleaved sequences at once (HTTP, gRPC unary, gRPC streams
 * that send a whole sequence ahead), each sequence's accumulated results checked; Triton's errors
 * for unknown and ended sequences on both transports; the `sequence` extension advertised.
 *
 * `acc` (direct, 2 instances × 4 slots, numeric CORRID) keeps its sums in the instance, keyed by
 * the correlation ID: it relies on every request of a sequence reaching the same instance, in
 * order. `acc_state` (oldest, string IDs) keeps nothing: its sum travels as implicit state.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, InferInput, type InferResult } from '@tritium/client';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import { startTestServerWith, type TestServer } from './support/start-server.ts';

const CONTROLS = (corrid: string) => `
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "END" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: ${corrid} } ] }
  ]`;

const MODELS: Record<string, { config: string; code: string }> = {
  acc: {
    config: `backend: "python"
max_batch_size: 4
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching { max_sequence_idle_microseconds: 60000000 ${CONTROLS('TYPE_UINT64')} }
instance_group [ { kind: KIND_CPU count: 2 } ]`,
    code: `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
const first = (r: InferenceRequest, name: string) => getInputTensorByName(r, name)!.asArray()[0];
export default class TritonPythonModel {
  private sums = new Map<string, number>();
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => {
      const out = (v: number) => new InferenceResponse([new Tensor('OUTPUT', Int32Array.of(v), [1, 1])]);
      if (first(r, 'READY') === 0) return out(0); // a filler row of a direct batch
      const id = String(first(r, 'CORRID'));
      if (id !== String(r.correlationId())) throw new Error('CORRID control and correlationId() disagree');
      const sum = (first(r, 'START') === 1 ? 0 : this.sums.get(id) ?? NaN) + Number(first(r, 'INPUT'));
      if (first(r, 'END') === 1) this.sums.delete(id);
      else this.sums.set(id, sum);
      return out(sum);
    });
  }
}
`,
  },
  acc_state: {
    config: `backend: "python"
max_batch_size: 4
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching {
  max_sequence_idle_microseconds: 60000000
  oldest { max_candidate_sequences: 8 max_queue_delay_microseconds: 2000 }
  ${CONTROLS('TYPE_STRING')}
  state [ { input_name: "ACC_IN" output_name: "ACC_OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
}
instance_group [ { kind: KIND_CPU count: 1 } ]`,
    code: `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => {
      const sum = Number(getInputTensorByName(r, 'ACC_IN')!.asArray()[0]) + Number(getInputTensorByName(r, 'INPUT')!.asArray()[0]);
      const t = Int32Array.of(sum);
      return new InferenceResponse([new Tensor('OUTPUT', t, [1, 1]), new Tensor('ACC_OUT', Int32Array.of(sum), [1, 1])]);
    });
  }
}
`,
  },
};

let s: TestServer;
let repo = '';

beforeAll(async () => {
  repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-seq-e2e-'));
  for (const [name, m] of Object.entries(MODELS)) {
    mkdirSync(path.join(repo, name, '1'), { recursive: true });
    writeFileSync(path.join(repo, name, 'config.pbtxt'), m.config);
    writeFileSync(path.join(repo, name, '1', 'model.ts'), m.code);
  }
  s = await startTestServerWith({ modelRepositories: [repo] }, [pythonLikeBackend()]);
}, 120_000);

afterAll(async () => {
  await s?.close();
  if (repo) rmSync(repo, { recursive: true, force: true });
});

const input = (v: number) => new InferInput('INPUT', [1, 1], 'INT32').setData(Int32Array.of(v));
const out = (r: InferResult) => r.asTypedArray('OUTPUT', 'INT32')[0]!;
const pause = () => new Promise<void>((resolve) => setTimeout(resolve, Math.floor(Math.random() * 3)));
const runningSums = (values: number[]) => values.map((_, i) => values.slice(0, i + 1).reduce((a, b) => a + b, 0));

type Client = 'http' | 'grpc' | 'stream';

/** One client running one sequence of `values` through `model`; resolves with the outputs in order. */
async function runSequence(model: string, id: number | string, values: number[], how: Client): Promise<number[]> {
  const flags = (i: number) => ({ sequenceId: id, sequenceStart: i === 0, sequenceEnd: i === values.length - 1 });
  if (how === 'stream') {
    // The whole sequence is sent ahead on one stream: the batcher must keep it in order.
    const client = new GrpcInferenceServerClient(s.grpcUrl);
    const results = new Map<string, number>();
    const errors: string[] = [];
    client.startStream((r, e) => {
      if (e) errors.push(e.message);
      else results.set(r!.id, out(r!));
    });
    values.forEach((v, i) => client.asyncStreamInfer(model, [input(v)], { requestId: `${id}-${i}`, ...flags(i) }));
    while (results.size + errors.length < values.length) await new Promise((r) => setTimeout(r, 5));
    await client.stopStream();
    client.close();
    expect(errors).toEqual([]);
    return values.map((_, i) => results.get(`${id}-${i}`)!);
  }
  const outs: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const r = how === 'http' ? await s.http.infer(model, [input(values[i]!)], flags(i)) : await s.grpc.infer(model, [input(values[i]!)], flags(i));
    outs.push(out(r));
    await pause();
  }
  return outs;
}

describe('sequence batching through the transports', () => {
  it('advertises the sequence extension', async () => {
    expect((await s.http.getServerMetadata()).extensions).toContain('sequence');
    expect((await s.grpc.getServerMetadata()).extensions).toContain('sequence');
  });

  it('keeps 24 interleaved sequences of HTTP, gRPC and streaming clients apart and in order (direct, per-instance state)', async () => {
    const kinds: Client[] = ['http', 'grpc', 'stream'];
    const sequences = Array.from({ length: 24 }, (_, k) => ({ id: 1000 + k, values: Array.from({ length: 6 }, (_, i) => (k + 1) * 10 + i), how: kinds[k % 3]! }));
    const outs = await Promise.all(sequences.map((q) => runSequence('acc', q.id, q.values, q.how)));
    sequences.forEach((q, k) => expect(outs[k], `sequence ${q.id} over ${q.how}`).toEqual(runningSums(q.values)));
  }, 120_000);

  it('carries implicit state per sequence with string IDs (oldest), many sequences at once', async () => {
    const kinds: Client[] = ['grpc', 'http', 'stream'];
    const sequences = Array.from({ length: 12 }, (_, k) => ({ id: `session-${k}`, values: Array.from({ length: 5 }, (_, i) => k - i), how: kinds[k % 3]! }));
    const outs = await Promise.all(sequences.map((q) => runSequence('acc_state', q.id, q.values, q.how)));
    sequences.forEach((q, k) => expect(outs[k], `sequence ${q.id} over ${q.how}`).toEqual(runningSums(q.values)));
  }, 120_000);

  it("answers a request of an unknown or ended sequence with Triton's error (HTTP 400, gRPC INVALID_ARGUMENT)", async () => {
    await runSequence('acc', 77, [1, 2], 'http');
    const message = "inference request for sequence 77 to model 'acc' must specify the START flag on the first request of the sequence";
    await expect(s.http.infer('acc', [input(3)], { sequenceId: 77 })).rejects.toMatchObject({ status: '400', message });
    await expect(s.grpc.infer('acc', [input(3)], { sequenceId: 77 })).rejects.toMatchObject({ status: 'StatusCode.INVALID_ARGUMENT', message });
    await expect(s.http.infer('acc', [input(3)])).rejects.toMatchObject({
      message: "inference request to model 'acc' must specify a non-zero or non-empty correlation ID",
    });
  });

  it("refuses malformed sequence parameters with Triton's wording per transport", async () => {
    await expect(s.grpc.infer('acc', [input(1)], { parameters: { sequence_id: 1, sequence_start: 1 } })).rejects.toMatchObject({
      message: "invalid value type for 'sequence_start' parameter, expected bool_param.",
    });
    await expect(s.http.infer('acc', [input(1)], { parameters: { sequence_id: -3 } })).rejects.toMatchObject({ message: /^Unable to parse 'sequence_id'/ });
  });

  it('keeps uint64 IDs past 2^53 exact over HTTP and gRPC (two IDs one apart are two sequences)', async () => {
    const a = 2n ** 60n;
    const b = a + 1n;
    await s.http.infer('acc', [input(5)], { sequenceId: a, sequenceStart: true });
    await s.grpc.infer('acc', [input(7)], { sequenceId: b, sequenceStart: true });
    expect(out(await s.http.infer('acc', [input(1)], { sequenceId: a, sequenceEnd: true }))).toBe(6);
    expect(out(await s.grpc.infer('acc', [input(1)], { sequenceId: b, sequenceEnd: true }))).toBe(8);
  });
});
