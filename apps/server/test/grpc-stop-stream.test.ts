/**
 * A stop seen by a gRPC client holding a ModelStreamInfer stream open (a Triton client's
 * start_stream, perf --streaming): the requests it sent are answered, then the stream ends with
 * status UNAVAILABLE `Server is stopping` (gRPC's "retry elsewhere"), never a reset or a CANCELLED
 * from the listener closing under it.
 */
import { Client, credentials, Metadata, status as GrpcStatus, type StatusObject } from '@grpc/grpc-js';
import { decodeStreamResponse, encodeInferRequest, type WireInferRequest, type WireStreamResponse } from '@tritium/client/proto';
import { afterEach, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from './support/start-server.ts';
import { arrivals } from './support/arrivals.ts';

let s: TestServer | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await s?.close();
  s = undefined;
});

function openStream(url: string) {
  const client = new Client(url, credentials.createInsecure());
  clients.push(client);
  const call = client.makeBidiStreamRequest('/inference.GRPCInferenceService/ModelStreamInfer', encodeInferRequest, decodeStreamResponse, new Metadata());
  const responses: WireStreamResponse[] = [];
  call.on('data', (m: WireStreamResponse) => responses.push(m));
  call.on('error', () => undefined); // the status below carries it
  const status = new Promise<StatusObject>((resolve) => call.on('status', resolve));
  return { call, responses, status };
}

const request = (id: string, fault?: string): WireInferRequest => ({
  model_name: 'slow',
  model_version: '',
  id,
  parameters: fault ? { fault } : {},
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1], parameters: {}, contents: { fp32_contents: [1] } }],
  outputs: [],
  raw_input_contents: [],
});

/** `p`, or a rejection after `ms` (the test's bound, so a regression fails instead of hanging). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

it('an idle open stream ends with UNAVAILABLE "Server is stopping" when the stop begins', async () => {
  s = await startTestServer({ exitTimeoutSecs: 5 });
  const stream = openStream(s.grpcUrl);
  stream.call.write(request('a'));
  await vi.waitFor(() => expect(stream.responses).toHaveLength(1), { timeout: 10_000 });
  const stopped = s.server.stop();
  const status = await within(stream.status, 20_000, 'stream status');
  expect({ code: GrpcStatus[status.code], details: status.details }).toEqual({ code: 'UNAVAILABLE', details: 'Server is stopping' });
  await stopped;
});

it('a stream with a request in flight gets its response, then UNAVAILABLE', async () => {
  const seen = arrivals();
  s = await startTestServer({ exitTimeoutSecs: 10 }, undefined, undefined, undefined, seen.wrap);
  const stream = openStream(s.grpcUrl);
  stream.call.write(request('b', 'delay:1500'));
  await within(seen.reached('slow'), 10_000, 'request reaching the server');
  const stopped = s.server.stop();
  const status = await within(stream.status, 20_000, 'stream status');
  expect(stream.responses.map((r) => [r.error_message, r.infer_response?.id])).toEqual([['', 'b']]);
  expect({ code: GrpcStatus[status.code], details: status.details }).toEqual({ code: 'UNAVAILABLE', details: 'Server is stopping' });
  await stopped;
});
