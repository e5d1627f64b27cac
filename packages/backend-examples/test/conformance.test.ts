/** Triton's example `identity` backend through the backend conformance suite (@tritium/core/testing). */
import { afterAll, describe, it } from 'vitest';
import { tensorFromTyped } from '@tritium/core';
import { backendConformanceSuite } from '@tritium/core/testing';
import { identityBackend } from '../src/index.ts';

const suite = backendConformanceSuite({
  backend: identityBackend(),
  backendName: 'identity',
  writeIdentityModel: () => `backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
  // OUTPUT5 copies INPUT5, which the request lacks: Triton's identity answers UNSUPPORTED.
  refusedRequest: (model) => ({
    id: 'refused',
    model,
    inputs: [tensorFromTyped('INPUT0', 'FP32', [1, 3], Float32Array.of(1, 2, 3))],
    outputs: [{ name: 'OUTPUT5' }],
  }),
});

describe('backend conformance: identity (backend-examples)', () => {
  afterAll(() => suite.close());
  for (const c of suite.cases) it(c.name, () => c.run());
});
