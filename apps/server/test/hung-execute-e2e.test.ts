/**
 * A model whose execute never returns, seen by Triton's clients: the HTTP `timeout` parameter
 * answers 503 `Request timeout expired`, a gRPC deadline ends the call and the server lets the
 * request go (counted, nothing left pending), and the stuck execute is logged with model,
 * instance and elapsed time and counted in `tritium_execute_overrun_total`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { InferInput, InferenceServerException } from '@tritium/client';
import { faultBackend } from '@tritium/core/testing';
import { startTestServerWith, type TestServer } from './support/start-server.ts';

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-hung-repo-'));
let s: TestServer;

beforeAll(async () => {
  mkdirSync(path.join(repo, 'stuck', '1'), { recursive: true });
  writeFileSync(
    path.join(repo, 'stuck', 'config.pbtxt'),
    `backend: "fault"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]
`,
  );
  s = await startTestServerWith({ modelRepositories: [repo], exitTimeoutSecs: 1 }, [faultBackend({ executeWarnMs: 100 })]);
});
afterAll(async () => {
  await s?.close();
  rmSync(repo, { recursive: true, force: true });
});

const x = () => [new InferInput('INPUT0', [1], 'FP32').setData(Float32Array.of(1))];

async function failure(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

it('HTTP: the request timeout answers 503 although the execute never returns', async () => {
  const e = await failure(s.http.infer('stuck', x(), { parameters: { fault: 'never' }, timeout: 300_000 }));
  expect([e.status, e.message]).toEqual(['503', 'Request timeout expired']);
});

it('gRPC: a deadline ends the call, and the server lets the request go', async () => {
  // The deadline must outlast the trip to the server on a loaded machine (at 300 ms it sometimes expired
  // before the server saw the call: nothing was then counted), and the execute never returns anyway.
  const e = await failure(s.grpc.infer('stuck', x(), { parameters: { fault: 'never' }, clientTimeoutMs: 3000 }));
  expect(e.status).toBe('StatusCode.DEADLINE_EXCEEDED');
  await vi.waitFor(
    () => {
      const m = s.api.metrics().find((k) => k.model === 'stuck')!;
      expect(m.requestFailure).toMatchObject({ REJECTED: 1, CANCELED: 1 });
      expect(m.pendingRequests).toBe(0);
    },
    { timeout: 30_000 },
  );
});

it('logs and counts each execute past the warn threshold', async () => {
  await vi.waitFor(
    async () => {
      const text = await fetch(`http://127.0.0.1:${s.metricsPort}/metrics`).then((r) => r.text());
      const counts = [...text.matchAll(/^tritium_execute_overrun_total\{model="stuck",version="1",instance="stuck_0_\d"\} (\d+)$/gm)].map((m) => Number(m[1]));
      expect(counts.reduce((a, b) => a + b, 0)).toBe(2);
    },
    { timeout: 30_000 },
  );
  expect(s.logs()).toMatch(/model 'stuck' instance 'stuck_0_\d': execute of 1 request\(s\) still running after \d+ ms \(warn threshold 100 ms; no execute timeout set\)/);
});
