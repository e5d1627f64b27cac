/**
 * The TensorRT backend through the backend conformance suite (@tritium/core/testing), on the TEST
 * DOUBLE of its shim (test/double/trt_double.c, compiled here): the backend's own code, the double
 * standing in for TensorRT and CUDA behind the same C ABI.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { tensorFromTyped } from '@tritium/core';
import { backendConformanceSuite } from '@tritium/core/testing';
import { tensorrtBackend } from '../src/index.ts';
import { buildDouble, doubleEngine, TempDir } from './helpers.ts';

const dir = new TempDir();
const shimPath = buildDouble(dir.root);
const CONFIG = `backend: "tensorrt"
max_batch_size: 8
instance_group [ { kind: KIND_CPU count: 1 } ]
`;

const suite = backendConformanceSuite({
  backend: tensorrtBackend({ shimPath }),
  backendName: 'tensorrt',
  writeIdentityModel(modelDir) {
    const engine = doubleEngine({
      inputs: [{ name: 'INPUT0', type: 0, dims: [-1, -1], profiles: [[[1, 1], [4, 3], [8, 16]]] }],
      outputs: [{ name: 'OUTPUT0', type: 0, dims: [-1, -1] }],
      op: 'identity',
    });
    writeFileSync(path.join(modelDir, '1', 'model.plan'), engine);
    return CONFIG;
  },
  // INT32 where the engine takes FP32: refused alone (INVALID_ARG), its neighbours run.
  refusedRequest: (model) => ({ id: 'refused', model, inputs: [tensorFromTyped('INPUT0', 'INT32', [1, 3], Int32Array.of(1, 2, 3))] }),
  writeBrokenModel(modelDir) {
    writeFileSync(path.join(modelDir, '1', 'model.plan'), 'not an engine');
    return CONFIG;
  },
});

describe('backend conformance: tensorrt (shim test double)', () => {
  afterAll(async () => {
    await suite.close();
    dir.dispose();
  });
  for (const c of suite.cases) it(c.name, () => c.run());
});
