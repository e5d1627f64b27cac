/**
 * A temporary model repository for end-to-end tests, served by core's InferenceServer with the
 * `@tritium/core/testing` backends (real worker threads) plus `repeat`, a small in-process
 * decoupled backend (n responses for input n) written against the backend SPI.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { typedView, type InferRequest, type ResponseSink } from '@tritium/core';
import { BACKEND_API_VERSION, type Backend } from '@tritium/core/backend';

/** An identity model of one datatype, any length, one instance. */
const identityModel = (datatype: string, maxBatchSize: number): string => `backend: "identity"
max_batch_size: ${maxBatchSize}
input [ { name: "INPUT0" data_type: ${datatype} dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: ${datatype} dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;

const MODELS: Record<string, string> = {
  simple: identityModel('TYPE_FP32', 8),
  strings: identityModel('TYPE_STRING', 0),
  int64: identityModel('TYPE_INT64', 0),
  uint64: identityModel('TYPE_UINT64', 0),
  addsub: `backend: "addsub"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
  slow: `backend: "fault"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
  sequence: `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching { control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
  repeat: `backend: "repeat"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
};

export interface TestRepository {
  readonly dir: string;
  remove(): void;
}

export function makeRepository(names: readonly string[] = Object.keys(MODELS)): TestRepository {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-server-test-'));
  for (const name of names) {
    mkdirSync(path.join(dir, name, '1'), { recursive: true });
    writeFileSync(path.join(dir, name, 'config.pbtxt'), MODELS[name]!);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Decoupled backend: request with IN=[n] gets n responses OUT=[0..n-1], then completes. */
export function repeatBackend(): Backend {
  const run = (batch: readonly InferRequest[], sinks: readonly ResponseSink[]) => {
    batch.forEach((r, k) => {
      const n = (typedView(r.inputs[0]!) as Int32Array)[0]!;
      for (let i = 0; i < n; i++) {
        sinks[k]!.response({
          id: r.id,
          model: r.model,
          version: r.version ?? 1,
          outputs: [{ name: 'OUT', datatype: 'INT32', shape: [1], data: new Uint8Array(Int32Array.of(i).buffer) }],
        });
      }
      sinks[k]!.complete();
    });
  };
  return {
    name: 'repeat',
    apiVersion: BACKEND_API_VERSION,
    async loadModel() {
      return {
        async createInstance() {
          return {
            async execute(batch) {
              return { results: batch.map(() => ({ id: '', model: 'repeat', version: 1, outputs: [] })) };
            },
            async executeDecoupled(batch, sinks) {
              run(batch, sinks);
            },
            async dispose() {},
          };
        },
        async dispose() {},
      };
    },
  };
}
