/** The ONNX Runtime backend through the backend conformance suite (@tritium/core/testing). */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { tensorFromTyped } from '@tritium/core';
import { backendConformanceSuite } from '@tritium/core/testing';
// Test models come from the generator tool; the package itself never imports it.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { buildIdentityModel } from '@tritium/onnx-gen';
import { onnxBackend } from '../src/index.ts';

const CONFIG = `backend: "onnxruntime"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;

const suite = backendConformanceSuite({
  backend: onnxBackend({ cores: 2 }),
  backendName: 'onnxruntime',
  writeIdentityModel(modelDir) {
    writeFileSync(path.join(modelDir, '1', 'model.onnx'), buildIdentityModel({ dtype: 'FP32' }));
    return CONFIG;
  },
  // INT32 where the model takes FP32: refused alone (INVALID_ARG), its neighbours run.
  refusedRequest: (model) => ({ id: 'refused', model, inputs: [tensorFromTyped('INPUT0', 'INT32', [1, 3], Int32Array.of(1, 2, 3))] }),
  writeBrokenModel(modelDir) {
    writeFileSync(path.join(modelDir, '1', 'model.onnx'), 'not an ONNX model');
    return CONFIG;
  },
});

describe('backend conformance: onnxruntime', () => {
  afterAll(() => suite.close());
  for (const c of suite.cases) it(c.name, () => c.run());
});
