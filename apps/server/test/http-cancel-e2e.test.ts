/**
 * An HTTP client that goes away cancels its inference: the server answers nobody, counts the
 * request CANCELED and aborts its execution, so the instance is free for the next request. Requests
 * answered earlier on the same kept-alive connection are not affected (the connection carries one
 * cancellation signal, aborted only when it closes).
 */
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { faultBackend } from '@tritium/core/testing';
import { startTestServerWith, type TestServer } from './support/start-server.ts';

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-http-cancel-repo-'));
let s: TestServer;

beforeAll(async () => {
  mkdirSync(path.join(repo, 'slow', '1'), { recursive: true });
  writeFileSync(
    path.join(repo, 'slow', 'config.pbtxt'),
    `backend: "fault"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
  );
  s = await startTestServerWith({ modelRepositories: [repo] }, [faultBackend()]);
});
afterAll(async () => {
  await s?.close();
  rmSync(repo, { recursive: true, force: true });
});

const body = (fault: string) =>
  JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1], datatype: 'FP32', data: [1] }], parameters: { fault } });

function post(agent: http.Agent, fault: string): { req: http.ClientRequest; status: Promise<number> } {
  const [host, port] = s.httpUrl.split(':');
  const req = http.request({ host, port: Number(port), method: 'POST', path: '/v2/models/slow/infer', agent, headers: { 'content-type': 'application/json' } });
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.end(body(fault));
  return { req, status };
}

const slow = () => s.api.metrics().find((m) => m.model === 'slow')!;

it('a client that goes away cancels its running request; earlier requests on its connection were answered', async () => {
  const kept = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const other = new http.Agent({ keepAlive: false });
  try {
    // Two answered requests on one kept-alive connection, then a long one on the same connection.
    expect(await post(kept, 'ok').status).toBe(200);
    expect(await post(kept, 'ok').status).toBe(200);
    const long = post(kept, 'delay:60000');
    const abandoned = long.status.catch((e: Error) => e);
    // A second request queues behind it on the one instance: the long one is running.
    const next = post(other, 'ok');
    await vi.waitFor(() => expect(slow().pendingRequests).toBe(1), { timeout: 10_000 });
    long.req.destroy();
    expect(await abandoned).toBeInstanceOf(Error);
    // Its execution was aborted: the instance answers the queued request long before 60 s.
    expect(await next.status).toBe(200);
    await vi.waitFor(() => expect(slow().requestFailure.CANCELED).toBe(1), { timeout: 10_000 });
    expect(slow().requestSuccess).toBe(3);
  } finally {
    kept.destroy();
    other.destroy();
  }
});
