/**
 * Sequence models on the ONNX Runtime backend: Triton's example repository's `simple_sequence`
 * (direct) and `simple_dyna_sequence` (oldest, CORRID) with their configs as written and graphs
 * that compute what Triton's shipped models compute, driven as Triton's
 * simple_*_sequence_*_client.py examples drive them (and checked against what they check); an
 * implicit-state accumulator; Triton's load errors for a control the model lacks.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InferenceServer, tensorFromTyped, typedView, type CorrelationId, type InferResponse } from '@tritium/core';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { buildAccumulatorStateModel, buildIdentityModel, buildSequenceControlModel } from '@tritium/onnx-gen';
import { onnxBackend } from '../src/index.ts';

const SIMPLE_SEQUENCE = `name: "simple_sequence"
platform: "onnxruntime_onnx"
max_batch_size: 8
sequence_batching {
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] }
  ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU } ]
`;

const SIMPLE_DYNA_SEQUENCE = `name: "simple_dyna_sequence"
platform: "onnxruntime_onnx"
max_batch_size: 8
sequence_batching {
    max_sequence_idle_microseconds: 10000000
    oldest {
      max_candidate_sequences: 1024
      max_queue_delay_microseconds: 10000
    }
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "END" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }
  ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "3" } } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
`;

const ACC_STATE = `name: "acc_state"
platform: "onnxruntime_onnx"
max_batch_size: 8
sequence_batching {
  control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ]
  state [ { input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_INT32 dims: [ 1 ] } ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU } ]
`;

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function repository(models: Record<string, { config: string; model: Uint8Array }>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-onnx-seq-'));
  temps.push(dir);
  for (const [name, m] of Object.entries(models)) {
    mkdirSync(path.join(dir, name, '1'), { recursive: true });
    writeFileSync(path.join(dir, name, 'config.pbtxt'), m.config);
    writeFileSync(path.join(dir, name, '1', 'model.onnx'), m.model);
  }
  return dir;
}

const out = (r: InferResponse): number => (typedView(r.outputs[0]!) as Int32Array)[0]!;

/** The sync client's loop: one request per value, START on the first, END on the last. */
async function send(server: InferenceServer, model: string, id: CorrelationId, values: number[]): Promise<number[]> {
  const results: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const r = await server.infer({
      id: `${String(id)}-${i}`,
      model,
      inputs: [tensorFromTyped('INPUT', 'INT32', [1, 1], Int32Array.of(values[i]!))],
      sequence: { id, start: i === 0, end: i === values.length - 1 },
    });
    results.push(out(r));
  }
  return results;
}

const VALUES = [11, 7, 5, 3, 2, 0, 1];

describe("Triton's example sequence models on onnxruntime", () => {
  it('simple_sequence answers as simple_http_sequence_sync_infer_client.py expects, sequences run side by side', async () => {
    const server = new InferenceServer({
      repositories: [repository({ simple_sequence: { config: SIMPLE_SEQUENCE, model: buildSequenceControlModel() } })],
      backends: [onnxBackend()],
    });
    await server.start();
    try {
      const [int0, int1, str0] = await Promise.all([
        send(server, 'simple_sequence', 1000, [0, ...VALUES]),
        send(server, 'simple_sequence', 1001, [100, ...VALUES.map((v) => 0 - v + 0)]),
        send(server, 'simple_sequence', 'b2d7bb4e-64b7-4b1a-9a9c-0f1d0a0e6d11', [20, ...VALUES.map((v) => 0 - v + 0)]),
      ]);
      // The client's expectations: i = 0 → the value + START (1); then each value as sent.
      expect(int0).toEqual([1, ...VALUES]);
      expect(int1).toEqual([101, ...VALUES.map((v) => 0 - v + 0)]);
      expect(str0).toEqual([21, ...VALUES.map((v) => 0 - v + 0)]);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('simple_dyna_sequence (oldest, CORRID) adds the correlation ID to the END request, as the --dyna client expects', async () => {
    const server = new InferenceServer({
      repositories: [repository({ simple_dyna_sequence: { config: SIMPLE_DYNA_SEQUENCE, model: buildSequenceControlModel({ dyna: true }) } })],
      backends: [onnxBackend()],
    });
    await server.start();
    try {
      const [a, b] = await Promise.all([
        send(server, 'simple_dyna_sequence', 1000, [0, ...VALUES]),
        send(server, 'simple_dyna_sequence', 1001, [100, ...VALUES.map((v) => 0 - v + 0)]),
      ]);
      expect(a).toEqual([1, ...VALUES.slice(0, -1), 1 + 1000]);
      expect(b).toEqual([101, ...VALUES.slice(0, -1).map((v) => 0 - v + 0), -1 + 1001]);
      // A string ID where CORRID is UINT64: Triton's request check.
      await expect(send(server, 'simple_dyna_sequence', 'abc', [1])).rejects.toThrow(
        "sequence batching control 'CORRID' data-type is 'BYTES', but model 'simple_dyna_sequence' expects 'UINT64'",
      );
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('carries implicit state (INPUT_STATE ← OUTPUT_STATE) per sequence, batched together', async () => {
    const server = new InferenceServer({
      repositories: [repository({ acc_state: { config: ACC_STATE, model: buildAccumulatorStateModel() } })],
      backends: [onnxBackend()],
    });
    await server.start();
    try {
      const runs = await Promise.all([1, 2, 3, 4].map((k) => send(server, 'acc_state', k, [k, 10 * k, 100 * k])));
      expect(runs).toEqual([1, 2, 3, 4].map((k) => [k, 11 * k, 111 * k]));
    } finally {
      await server.stop();
    }
  }, 120_000);

  it("refuses a control input the model does not have, with Triton's message", async () => {
    const config = SIMPLE_SEQUENCE.replace('name: "simple_sequence"', 'name: "no_ready"');
    const server = new InferenceServer({
      repositories: [repository({ no_ready: { config, model: buildIdentityModel({ dtype: 'INT32', shape: ['batch', 1], inputName: 'INPUT', outputName: 'OUTPUT' }) } })],
      backends: [onnxBackend()],
    });
    await expect(server.start()).rejects.toThrow("unable to load model 'no_ready', configuration expects 3 inputs, model provides 1");
  }, 120_000);
});
