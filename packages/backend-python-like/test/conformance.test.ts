/**
 * The python-like backend (model.ts) through the backend conformance suite (@tritium/core/testing),
 * in both isolations: a worker thread, and a sandboxed child process.
 */
import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { tensorFromTyped } from '@tritium/core';
import { backendConformanceSuite } from '@tritium/core/testing';
import { pythonLikeBackend } from '../src/index.ts';
import { FIXTURES } from './helpers.ts';

const config = (isolation: string): string => `backend: "python"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
parameters { key: "tritium.isolation" value: { string_value: "${isolation}" } }
`;

for (const isolation of ['thread', 'process']) {
  const suite = backendConformanceSuite({
    backend: pythonLikeBackend({ restart: { initialBackoffMs: 10 } }),
    backendName: 'python',
    writeIdentityModel(modelDir) {
      cpSync(path.join(FIXTURES, 'conformance_identity', '1', 'model.ts'), path.join(modelDir, '1', 'model.ts'));
      return config(isolation);
    },
    // The model answers a request whose first value is negative with an error of its own.
    refusedRequest: (model) => ({ id: 'refused', model, inputs: [tensorFromTyped('INPUT0', 'FP32', [1, 3], Float32Array.of(-1, 2, 3))] }),
    writeBrokenModel(modelDir) {
      writeFileSync(path.join(modelDir, '1', 'model.ts'), 'export default class TritonPythonModel { execute( }\n');
      return config(isolation);
    },
  });

  describe(`backend conformance: python (model.ts, ${isolation} isolation)`, () => {
    afterAll(() => suite.close());
    for (const c of suite.cases) it(c.name, () => c.run());
  });
}
