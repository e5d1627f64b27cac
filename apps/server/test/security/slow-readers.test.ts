/**
 * A client that does not read a stream cannot make the server buffer without end. `tritium serve`
 * (a real process) runs a decoupled model.ts that sends 1000 responses of 256 KiB (250 MiB), awaiting
 * each `send()`, to a gRPC ModelStreamInfer client and an HTTP generate_stream client that never read.
 * Past `--stream-max-queued-size` (1 MiB here) unread, the model's sends wait, across the worker, so
 * the server's memory stays bounded; after `--stream-stall-timeout-secs` (2 s here) the stream ends
 * with an error naming both flags and the request is cancelled, which fails the model's waiting send
 * (CANCELLED) so it stops. A client that leaves cancels the same way. A neighbour is served meanwhile.
 */
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeInferRequest } from '@tritium/client/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STREAM_LIMITS } from '../../src/protocol/stream-queue.ts';
import { parseServeFlags } from '../../src/cli/flags.ts';
import { SERVE_USAGE } from '../../src/cli/serve-usage.ts';
import { PROCESS_MEMORY_UNAVAILABLE, rssMiB } from '../support/process-memory.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

const RESPONSES = 1000;
const RESPONSE_KIB = 256;
/** What one stream that is not read may add to the server's resident memory (its responses: 250 MiB). */
const GROWTH_BOUND_MIB = 96;

/** Sends RESPONSES responses, awaiting each send, never looking at isCancelled(); logs how far it got and why it stopped. */
const FLOOD_MODEL = `import { InferenceResponse, Logger, TRITONSERVER_RESPONSE_COMPLETE_FINAL, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
const payload = 'x'.repeat(${RESPONSE_KIB} * 1024);
export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]) {
    for (const request of requests) {
      const sender = request.getResponseSender();
      void (async () => {
        let sent = 0;
        let why = 'finished';
        try {
          for (; sent < ${RESPONSES}; sent++) {
            await sender.send(new InferenceResponse([new Tensor('OUT', [payload], [1])]));
            await new Promise((resolve) => setImmediate(resolve));
          }
          await sender.send(undefined, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
        } catch (e) {
          why = \`\${(e as { code?: string }).code}: \${(e as Error).message}\`;
        }
        Logger.logInfo(\`flood '\${request.requestId()}': \${sent} of ${RESPONSES} sent, \${why}\`);
      })();
    }
    return undefined;
  }
}
`;

const FLOOD_CONFIG = `backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "N" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]`;

const MODELS: Record<string, { config: string; model: string }> = {
  flood: { config: FLOOD_CONFIG, model: FLOOD_MODEL },
  flood_process: { config: `${FLOOD_CONFIG}\nparameters { key: "tritium.isolation" value: { string_value: "process" } }`, model: FLOOD_MODEL },
  // The same model on the OpenAI completions route: its OUT is the text output.
  flood_openai: {
    config: `backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]
parameters { key: "tritium.openai" value: { string_value: "chat,completions" } }
parameters { key: "tritium.openai.text_output" value: { string_value: "OUT" } }`,
    model: FLOOD_MODEL,
  },
  neighbour: {
    config: `backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ -1 ] } ]`,
    model: `import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse([new Tensor('Y', r.inputs()[0]!.data, r.inputs()[0]!.shape)]));
  }
}`,
  },
};

let repo: string;
let serve: ServeProcess;
let ports: { http: number; grpc: number };

beforeAll(async () => {
  if (PROCESS_MEMORY_UNAVAILABLE) return;
  repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-slow-readers-'));
  for (const [name, m] of Object.entries(MODELS)) {
    mkdirSync(path.join(repo, name, '1'), { recursive: true });
    writeFileSync(path.join(repo, name, 'config.pbtxt'), `name: "${name}"\n${m.config}\n`);
    writeFileSync(path.join(repo, name, '1', 'model.ts'), m.model);
  }
  serve = startServeProcess([`--model-repository=${repo}`, '--stream-max-queued-size=1048576', '--stream-stall-timeout-secs=2']);
  const started = await Promise.race([serve.started, serve.exited.then(() => undefined)]);
  if (!started) throw new Error(serve.log());
  ports = { http: started.http, grpc: started.grpc };
  await waitReady();
}, 120_000);
afterAll(async () => {
  await serve?.stop();
  if (repo) rmSync(repo, { recursive: true, force: true });
});

function post(pathname: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: ports.http, method: 'POST', path: pathname, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function waitReady(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ok = await new Promise<boolean>((resolve) =>
      http.get(`http://127.0.0.1:${ports.http}/v2/health/ready`, (res) => (res.resume(), resolve(res.statusCode === 200))).on('error', () => resolve(false)),
    );
    if (ok) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`the server never became ready:\n${serve.log()}`);
}

const neighbour = (): Promise<number> => post('/v2/models/neighbour/infer', JSON.stringify({ inputs: [{ name: 'X', datatype: 'FP32', shape: [2], data: [1, 2] }] }));

/**
 * Waits for the flood model's last line about request `id` (a pattern; in the log past `logFrom`), sampling the server's RSS meanwhile and
 * asking the neighbour every 50 ms; returns how many responses it sent, why it stopped, the RSS growth
 * at its highest (MiB) and the neighbour's statuses.
 */
async function floodOutcome(id: string, base: number, logFrom = 0): Promise<{ sent: number; why: string; growthMiB: number; neighbours: number[] }> {
  const pid = serve.child.pid!;
  let peak = base;
  const neighbours: number[] = [];
  const line = new RegExp(`flood '${id}': (\\d+) of ${RESPONSES} sent, (.*)`);
  for (let i = 0; i < 600; i++) {
    peak = Math.max(peak, rssMiB(pid));
    const m = line.exec(serve.log().slice(logFrom));
    if (m) return { sent: Number(m[1]), why: m[2]!, growthMiB: peak - base, neighbours };
    if (i % 5 === 0) neighbours.push(await neighbour());
    await new Promise((done) => setTimeout(done, 10));
  }
  throw new Error(`the flood model never said how request '${id}' ended:\n${serve.log().slice(-4000)}`);
}

/** A framed ModelStreamInfer request for `model`. */
function floodFrame(id: string, model: string): Buffer {
  const message = encodeInferRequest({
    model_name: model,
    model_version: '',
    id,
    parameters: {},
    inputs: [{ name: 'N', datatype: 'INT32', shape: [1], parameters: {} }],
    outputs: [],
    raw_input_contents: [new Uint8Array(Int32Array.of(1).buffer)],
  });
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** Opens a ModelStreamInfer call for `model` whose client reads nothing (the stream paused: no HTTP/2 window given back). */
function unreadStream(id: string, model = 'flood'): { session: http2.ClientHttp2Session; stream: http2.ClientHttp2Stream; status: Promise<{ code: string; message: string }> } {
  const session = http2.connect(`http://127.0.0.1:${ports.grpc}`);
  session.on('error', () => undefined);
  const stream = session.request({ ':method': 'POST', ':path': '/inference.GRPCInferenceService/ModelStreamInfer', 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('error', () => undefined);
  const status = new Promise<{ code: string; message: string }>((resolve) => {
    stream.on('trailers', (h) => resolve({ code: String(h['grpc-status']), message: decodeURIComponent(String(h['grpc-message'] ?? '')) }));
    stream.on('close', () => resolve({ code: 'closed', message: '' }));
  });
  stream.write(floodFrame(id, model));
  stream.pause();
  return { session, stream, status };
}

describe.skipIf(PROCESS_MEMORY_UNAVAILABLE)('streams whose client does not read', () => {
  if (PROCESS_MEMORY_UNAVAILABLE) console.log(`[slow-readers.test] skipped: ${PROCESS_MEMORY_UNAVAILABLE}`);

  it('gRPC ModelStreamInfer: the model waits, the server stays bounded, the stream ends after the stall timeout naming both flags', async () => {
    const base = rssMiB(serve.child.pid!);
    const call = unreadStream('grpc-unread');
    try {
      const outcome = await floodOutcome('grpc-unread', base);
      expect(outcome.sent).toBeLessThan(RESPONSES / 4);
      expect(outcome.why).toBe('CANCELLED: Unable to send response: the request was cancelled.');
      expect(outcome.growthMiB).toBeLessThan(GROWTH_BOUND_MIB);
      expect(outcome.neighbours.every((s) => s === 200)).toBe(true);
      // Reading now, the client finds what was queued, then the status.
      call.stream.on('data', () => undefined);
      call.stream.resume();
      const status = await call.status;
      expect(status.code).toBe('8'); // RESOURCE_EXHAUSTED
      expect(status.message).toMatch(/^the client did not read this stream's responses: \d+ bytes queued for it, at least the bound of 1048576 \(--stream-max-queued-size\), for 2 s \(--stream-stall-timeout-secs\)$/);
    } finally {
      call.session.destroy();
    }
  }, 60_000);

  it('the same with the model in a sandboxed process: its sends wait across the process channel', async () => {
    const base = rssMiB(serve.child.pid!);
    const call = unreadStream('process-unread', 'flood_process');
    try {
      const outcome = await floodOutcome('process-unread', base);
      expect(outcome.sent).toBeLessThan(RESPONSES / 4);
      expect(outcome.why).toBe('CANCELLED: Unable to send response: the request was cancelled.');
      expect(outcome.growthMiB).toBeLessThan(GROWTH_BOUND_MIB);
    } finally {
      call.session.destroy();
    }
  }, 60_000);

  it('gRPC: a client that leaves makes the waiting send fail (CANCELLED) so the model stops, and the memory returns', async () => {
    const base = rssMiB(serve.child.pid!);
    const call = unreadStream('grpc-leaves');
    // Leaves once the first response arrived (the model is streaming).
    await new Promise<void>((resolve) => call.stream.once('response', () => resolve()));
    call.session.destroy();
    const outcome = await floodOutcome('grpc-leaves', base);
    expect(outcome.sent).toBeLessThan(RESPONSES / 4);
    expect(outcome.why).toBe('CANCELLED: Unable to send response: the request was cancelled.');
    expect(outcome.growthMiB).toBeLessThan(GROWTH_BOUND_MIB);
    expect(rssMiB(serve.child.pid!) - base).toBeLessThan(GROWTH_BOUND_MIB);
    expect(await neighbour()).toBe(200);
  }, 60_000);

  it('HTTP generate_stream: the model waits, the server stays bounded, the stream is closed after the stall timeout', async () => {
    const base = rssMiB(serve.child.pid!);
    const body = JSON.stringify({ id: 'http-unread', N: 1 });
    const socket = net.connect(ports.http, '127.0.0.1');
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`POST /v2/models/flood/generate_stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    socket.pause();
    try {
      const outcome = await floodOutcome('http-unread', base);
      expect(outcome.sent).toBeLessThan(RESPONSES / 4);
      expect(outcome.why).toBe('CANCELLED: Unable to send response: the request was cancelled.');
      expect(outcome.growthMiB).toBeLessThan(GROWTH_BOUND_MIB);
      expect(outcome.neighbours.every((s) => s === 200)).toBe(true);
      socket.resume();
      await closed; // the server closed the connection
    } finally {
      socket.destroy();
    }
  }, 60_000);
});

describe.skipIf(PROCESS_MEMORY_UNAVAILABLE)('OpenAI streams whose client does not read', () => {
  it('POST /v1/chat/completions with stream: true: the model waits, the server stays bounded, the stream ends after the stall timeout', async () => {
    const base = rssMiB(serve.child.pid!);
    const from = serve.log().length;
    const body = JSON.stringify({ model: 'flood_openai', stream: true, messages: [{ role: 'user', content: 'go' }] });
    const socket = net.connect(ports.http, '127.0.0.1');
    socket.on('error', () => undefined);
    const received: Buffer[] = [];
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    socket.pause();
    try {
      const outcome = await floodOutcome('cmpl-[0-9a-f-]+', base, from);
      expect(outcome.sent).toBeLessThan(RESPONSES / 4);
      expect(outcome.why).toBe('CANCELLED: Unable to send response: the request was cancelled.');
      expect(outcome.growthMiB).toBeLessThan(GROWTH_BOUND_MIB);
      expect(outcome.neighbours.every((s) => s === 200)).toBe(true);
      socket.on('data', (c: Buffer) => received.push(c));
      socket.resume();
      await closed; // the server closed the connection (what it had queued is dropped with it)
      const text = Buffer.concat(received).toString();
      expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\ncontent-type: text\/event-stream/);
      expect(text).toContain('data: {"id":"cmpl-');
      expect(text).not.toContain('[DONE]');
    } finally {
      socket.destroy();
    }
  }, 60_000);

  it('without stream: an answer longer than --stream-max-queued-size is refused and the model stopped', async () => {
    const base = rssMiB(serve.child.pid!);
    const from = serve.log().length;
    const answer = fetch(`http://127.0.0.1:${ports.http}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'flood_openai', prompt: 'go' }),
    });
    const outcome = await floodOutcome('cmpl-[0-9a-f-]+', base, from);
    expect(outcome.why).toBe('CANCELLED: Unable to send response: the request was cancelled.');
    expect(outcome.sent).toBeLessThan(RESPONSES / 4);
    const res = await answer;
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      'the answer is longer than 1048576 bytes, the most held for one client (--stream-max-queued-size); ask with stream: true',
    );
  }, 60_000);
});

describe('stream flags', () => {
  it('--stream-max-queued-size (4 MiB) and --stream-stall-timeout-secs (60) set the bounds; --help names them', () => {
    const defaults = parseServeFlags(['--model-repository=m']);
    expect(defaults.streamMaxQueuedSize).toBe(DEFAULT_STREAM_LIMITS.maxQueuedBytes);
    expect(DEFAULT_STREAM_LIMITS).toEqual({ maxQueuedBytes: 4 * 1024 * 1024, stallTimeoutMs: 60_000 });
    expect(defaults.streamStallTimeoutSecs).toBe(60);
    const set = parseServeFlags(['--model-repository=m', '--stream-max-queued-size=65536', '--stream-stall-timeout-secs=5']);
    expect([set.streamMaxQueuedSize, set.streamStallTimeoutSecs]).toEqual([65536, 5]);
    expect(() => parseServeFlags(['--model-repository=m', '--stream-max-queued-size=0'])).toThrow(/--stream-max-queued-size/);
    expect(SERVE_USAGE).toContain('--stream-max-queued-size <bytes> (4 MiB)');
    expect(SERVE_USAGE).toContain('--stream-stall-timeout-secs <n> (60)');
  });
});
