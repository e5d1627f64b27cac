/**
 * A stop as a Kubernetes rolling update makes it (SIGTERM, readiness down, clients on kept-alive
 * connections still sending): every request a keep-alive client sends during the stop gets an answer
 * (200 while in flight, 503 once refused) and the connection closes cleanly after it (`Connection:
 * close`), so the client reconnects elsewhere instead of losing its next request to a reset when the
 * listener closes. A connection left idle is closed by the server soon after the stop begins.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { faultBackend } from '@tritium/core/testing';
import type { InferenceServerApi } from '@tritium/core';
import { startTestServer, startTestServerWith, type TestServer } from './support/start-server.ts';

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-http-stop-keepalive-'));
mkdirSync(path.join(repo, 'slow', '1'), { recursive: true });
writeFileSync(
  path.join(repo, 'slow', 'config.pbtxt'),
  `backend: "fault"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]
`,
);

let s: TestServer | undefined;
const agents: http.Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) a.destroy();
  await s?.close();
  s = undefined;
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

interface Answer {
  readonly status: number;
  readonly connection: string | undefined;
}

function post(agent: http.Agent, fault: string): Promise<Answer> {
  const [host, port] = s!.httpUrl.split(':');
  return new Promise<Answer>((resolve, reject) => {
    const req = http.request({ host, port: Number(port), method: 'POST', path: '/v2/models/slow/infer', agent, headers: { 'content-type': 'application/json' } });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1], datatype: 'FP32', data: [1] }], parameters: { fault } }));
  });
}

/** A client looping on one kept-alive connection until the server says the connection closes. */
async function loop(agent: http.Agent, answers: Answer[], errors: string[]): Promise<void> {
  for (;;) {
    try {
      const a = await post(agent, 'ok');
      answers.push(a);
      if (a.connection === 'close') return;
    } catch (e) {
      errors.push(`${(e as NodeJS.ErrnoException).code ?? ''} ${(e as Error).message}`);
      return;
    }
  }
}

function keptAlive(): http.Agent {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(agent);
  return agent;
}

/** The socket an agent keeps for its next request, resolved once that socket closes. */
function closed(agent: http.Agent): Promise<void> {
  const sockets = Object.values(agent.freeSockets).flat() as Socket[];
  expect(sockets).toHaveLength(1);
  return new Promise((resolve) => sockets[0]!.once('close', () => resolve()));
}

async function stopUnderLoad(inFlight: string | undefined): Promise<void> {
  s = await startTestServerWith({ modelRepositories: [repo] }, [faultBackend()]);
  const loopers = [keptAlive(), keptAlive(), keptAlive()];
  // Each looping client has made its connection; one more connection is left idle.
  for (const a of loopers) expect((await post(a, 'ok')).status).toBe(200);
  const idle = keptAlive();
  expect((await post(idle, 'ok')).status).toBe(200);
  await new Promise((r) => setImmediate(r)); // the agent files the socket as free after the response ends
  const idleClosed = closed(idle);
  const longAgent = keptAlive();
  const long = inFlight === undefined ? undefined : post(longAgent, inFlight);

  const answers: Answer[] = [];
  const errors: string[] = [];
  const loops = loopers.map((a) => loop(a, answers, errors));
  while (answers.length < 30 && errors.length === 0) await new Promise((r) => setTimeout(r, 5));
  const stopped = s.server.stop();
  let stopDone = false;
  void stopped.then(() => (stopDone = true));

  await idleClosed;
  if (long) {
    // The idle connection closed while the request in flight was still running (the stop waits for it).
    expect(stopDone).toBe(false);
    expect(await long).toEqual({ status: 200, connection: 'close' });
  }
  await Promise.all(loops);
  await stopped;

  expect(errors).toEqual([]);
  expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
  // Every looping client was told to close, on a refusal (503) or an answer (200).
  expect(answers.filter((a) => a.connection === 'close')).toHaveLength(loopers.length);
  // ... and the agents' connections close (the server ends each after its last reply).
  await vi.waitFor(() => {
    for (const a of [...loopers, idle, longAgent]) {
      expect(Object.values(a.sockets).flat()).toEqual([]);
      expect(Object.values(a.freeSockets).flat()).toEqual([]);
    }
  });
}

it('during a stop that waits for a request in flight, keep-alive clients get 200 or 503 with Connection: close, never a reset; an idle connection is closed', async () => {
  await stopUnderLoad('delay:3000');
}, 30_000);

it('during a stop with nothing in flight, keep-alive clients in a loop still get answers and Connection: close, never a reset', async () => {
  await stopUnderLoad(undefined);
}, 30_000);


it('a keep-alive client silent while the models unload still gets its next request answered (503, Connection: close), not reset by the listener closing', async () => {
  // The drain here is shorter than the client's pause: its next request goes out only once the
  // InferenceServer has stopped, when the transports are about to close.
  let unloaded: () => void = () => {};
  const apiStopped = new Promise<void>((resolve) => (unloaded = resolve));
  const wrap = (api: InferenceServerApi): InferenceServerApi =>
    new Proxy(api, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key === 'stop') return (o?: { timeoutMs?: number }) => target.stop(o).finally(() => unloaded());
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  s = await startTestServer({ modelRepositories: [repo] }, undefined, undefined, [faultBackend()], wrap);
  const agent = keptAlive();
  expect((await post(agent, 'ok')).status).toBe(200);
  await new Promise((r) => setImmediate(r));
  const connectionClosed = closed(agent);
  const stopped = s.server.stop();
  await apiStopped;
  expect(await post(agent, 'ok')).toEqual({ status: 503, connection: 'close' });
  await connectionClosed;
  await stopped;
}, 30_000);
