/**
 * A custom backend, as a platform team would ship it in its own package: `backend: "reverse"`
 * reverses every BYTES element of INPUT0 into OUTPUT0. It implements core's backend SPI only.
 */
import { InferError, type InferRequest } from '@tritium/core';
import { BACKEND_API_VERSION, type Backend, type ExecuteResult } from '@tritium/core/backend';
import { decodeBytesElements, encodeBytesElements } from '@tritium/core/tensor';

function reverse(request: InferRequest): ExecuteResult {
  const input = request.inputs.find((t) => t.name === 'INPUT0');
  if (!input || input.datatype !== 'BYTES') return new InferError('INVALID_ARG', "reverse: expected a BYTES input 'INPUT0'");
  const reversed = decodeBytesElements(input.data, input.name).map((e) => Uint8Array.from(e).reverse());
  return {
    id: request.id,
    model: request.model,
    version: request.version ?? 1,
    outputs: [{ name: 'OUTPUT0', datatype: 'BYTES', shape: input.shape, data: encodeBytesElements(reversed) }],
  };
}

export function reverseBackend(): Backend {
  return {
    name: 'reverse',
    apiVersion: BACKEND_API_VERSION,
    async loadModel() {
      return {
        async createInstance() {
          return {
            async execute(batch) {
              return { results: batch.map(reverse) };
            },
            async dispose() {},
          };
        },
        async dispose() {},
      };
    },
  };
}
