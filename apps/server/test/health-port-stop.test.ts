/**
 * `--health-port` during a stop: the health thread reads not ready from the moment the stop begins,
 * as the main listeners do (their requests are refused from that moment), not up to one report
 * period (250 ms) later, while a request in flight holds the stop open.
 */
import { InferInput } from '@tritium/client';
import { afterEach, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/start-server.ts';
import { arrivals } from './support/arrivals.ts';

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

it('the health port answers ready 400 as soon as the stop begins', async () => {
  const seen = arrivals();
  s = await startTestServer({ healthPort: 0, healthAddress: '127.0.0.1', exitTimeoutSecs: 10 }, undefined, undefined, undefined, seen.wrap);
  const health = s.server.ports.health!;
  const ready = async () => (await fetch(`http://127.0.0.1:${health}/v2/health/ready`)).status;
  expect(await ready()).toBe(200);
  // A request in flight keeps the stop open for a while.
  const inflight = s.http.infer('slow', [new InferInput('INPUT0', [1], 'FP32').setData(Float32Array.of(1))], { parameters: { fault: 'delay:2000' } }).catch((e: unknown) => e);
  await seen.reached('slow');
  const stopped = s.server.stop();
  expect(s.api.isReady()).toBe(false);
  expect(await ready()).toBe(400);
  await inflight;
  await stopped;
});
