/**
 * Issue 26 item 5: a decoupled model.ts streams responses of ATTACK_RESPONSE_KIB (1024) KiB (one
 * BYTES element of 'x's: the same JSON size over HTTP), awaiting each `send()` (the model stops once
 * its request is cancelled), to ATTACK_STREAMS (1) clients that never read, for ATTACK_SECONDS (3);
 * then the clients leave. Unbounded, the server grows by hundreds of MB a second: keep it short. One scenario over gRPC ModelStreamInfer
 * (an HTTP/2 stream left paused: no window given back), one over HTTP generate_stream (a socket never
 * read). Bounded, the model's sends wait once `--stream-max-queued-size` is unread and memory comes
 * back when the clients leave; unbounded, the server queues every response.
 */
import http2 from 'node:http2';
import net from 'node:net';
import { encodeInferRequest } from '@tritium/client/proto';
import type { AttackScenario, AttackTarget, ScenarioModel } from './scenario.ts';

const RESPONSE_KIB = Number(process.env['ATTACK_RESPONSE_KIB'] ?? 1024);
const STREAMS = Number(process.env['ATTACK_STREAMS'] ?? 1);
const SECONDS = Number(process.env['ATTACK_SECONDS'] ?? 3);

const STREAMER: ScenarioModel = {
  config: `name: "streamer"
backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "N" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]
`,
  files: {
    'model.ts': `import { InferenceResponse, TRITONSERVER_RESPONSE_COMPLETE_FINAL, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
const payload = new Uint8Array(${RESPONSE_KIB} * 1024).fill(0x78);
export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]) {
    for (const request of requests) {
      const sender = request.getResponseSender();
      void (async () => {
        try {
          while (!request.isCancelled()) {
            await sender.send(new InferenceResponse([new Tensor('OUT', [payload], [1])]));
            await new Promise((resolve) => setImmediate(resolve));
          }
          await sender.send(undefined, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
        } catch {
          // cancelled: the client is gone
        }
      })();
    }
    return undefined;
  }
}
`,
  },
};

const hold = (): Promise<void> => new Promise((r) => setTimeout(r, SECONDS * 1000));

/** One framed ModelStreamInfer request for the streamer. */
function streamFrame(): Buffer {
  const message = encodeInferRequest({
    model_name: 'streamer',
    model_version: '',
    id: '',
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

export const slowReaderGrpc: AttackScenario = {
  name: 'slow-reader-grpc',
  description: `item 5: ${STREAMS} ModelStreamInfer client(s) that never read, a model streaming ${RESPONSE_KIB} KiB responses, for ${SECONDS} s, then the clients leave`,
  models: { streamer: STREAMER },
  async run(target: AttackTarget) {
    const sessions = Array.from({ length: STREAMS }, () => {
      const session = http2.connect(`http://127.0.0.1:${target.grpcPort}`);
      session.on('error', () => undefined);
      const stream = session.request({ ':method': 'POST', ':path': '/inference.GRPCInferenceService/ModelStreamInfer', 'content-type': 'application/grpc', te: 'trailers' });
      stream.on('error', () => undefined);
      stream.write(streamFrame());
      stream.pause();
      return session;
    });
    await hold();
    for (const s of sessions) s.destroy();
    return { streams: STREAMS, 'response size': `${RESPONSE_KIB} KiB`, 'unread for': `${SECONDS} s` };
  },
};

export const slowReaderHttp: AttackScenario = {
  name: 'slow-reader-http',
  description: `item 5: ${STREAMS} generate_stream client(s) that never read, a model streaming ${RESPONSE_KIB} KiB responses, for ${SECONDS} s, then the clients leave`,
  models: { streamer: STREAMER },
  async run(target: AttackTarget) {
    const body = JSON.stringify({ N: 1 });
    const sockets = Array.from({ length: STREAMS }, () => {
      const socket = net.connect(target.httpPort, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(`POST /v2/models/streamer/generate_stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      socket.pause();
      return socket;
    });
    await hold();
    for (const s of sockets) s.destroy();
    return { streams: STREAMS, 'response size': `${RESPONSE_KIB} KiB`, 'unread for': `${SECONDS} s` };
  },
};
