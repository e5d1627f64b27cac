/**
 * A hung execute never loses its requests: the request's own `timeout` (Triton's parameter, µs)
 * answers UNAVAILABLE `Request timeout expired` and cancellation answers CANCELLED, while the
 * model's execute spins forever (no execute timeout configured). Both also free the scheduler's
 * bookkeeping (the failure is counted, nothing stays pending).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultBackend } from '@tritium/core/testing';
import { InferError } from '../../src/errors.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { tensorFromTyped } from '../../src/tensor/tensor.ts';
import type { InferRequest, InferResponse } from '../../src/types.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

let repo: string;
let server: InferenceServer;
beforeAll(async () => {
  // Three instances, each left stuck for good by one test.
  const config = identityConfig('hung').replace('"identity"', '"fault"').replace(/count: \d+/, 'count: 3');
  repo = await makeRepo({ hung: { config } });
  server = new InferenceServer({ repositories: [repo], backends: [faultBackend()] });
  await server.start();
});
afterAll(async () => {
  await server?.stop({ timeoutMs: 100 });
  await removeRepo(repo);
});

const request = (fault: string, extra: Partial<InferRequest> = {}): InferRequest => ({
  id: fault,
  model: 'hung',
  inputs: [tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array([1, 2, 3, 4]))],
  parameters: { fault },
  ...extra,
});

async function errorOf(p: Promise<unknown>): Promise<InferError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(InferError.is(e), `expected an InferError, got ${String(e)}`).toBe(true);
  return e as InferError;
}

describe('a request whose execute never returns', () => {
  it('leaves a request that finishes in time alone', async () => {
    const r = await server.infer(request('delay:50', { timeoutUs: 30_000_000 }));
    expect(r.model).toBe('hung');
  });

  it('is answered at its own timeout with UNAVAILABLE "Request timeout expired", counted REJECTED', async () => {
    const e = await errorOf(server.infer(request('never', { timeoutUs: 300_000 })));
    expect([e.code, e.message]).toEqual(['UNAVAILABLE', 'Request timeout expired']);
    const m = server.metrics()[0]!;
    expect(m.requestFailure.REJECTED).toBe(1);
  });

  it('is answered CANCELLED when its client goes away', async () => {
    const abort = new AbortController();
    const pending = errorOf(server.infer(request('never', { signal: abort.signal })));
    setTimeout(() => abort.abort(), 200);
    const e = await pending;
    expect([e.code, e.message]).toEqual(['CANCELLED', 'request cancelled']);
  });

  it('streams end with the timeout error too, and nothing after it', async () => {
    const got: InferResponse[] = [];
    const done = await new Promise<InferError | undefined>((resolve) =>
      server.inferStream(request('never', { timeoutUs: 200_000 }), { response: (r) => void got.push(r), complete: resolve }),
    );
    expect([done?.code, done?.message]).toEqual(['UNAVAILABLE', 'Request timeout expired']);
    expect(got).toEqual([]);
  });

});
