/**
 * The configurations `npm run bench` (bench/run-all.ts) measures, each started and ready to load:
 * a `tritium serve` of a bench repository (pipeline.ts variants), or the microservice pattern (a
 * preprocessing HTTP service in a child process calling Tritium's bert_classifier over gRPC).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { http as tritonHttp, InferInput, InferRequestedOutput } from '@tritium/client';
import { startTritium, type ServeProcess } from '@tritium/example-setup';
import { writeRepository, type ClassifierModel, type CpuInstances, type Variant } from './repositories.ts';
import { SENTENCES } from './sentences.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

/** What a target needs from the run: where to say what it starts, and the most requests in flight. */
export interface TargetContext {
  readonly log: (line: string) => void;
  readonly maxConcurrency: number;
}

/** A configuration under load: its server (and side service) running, and how to send one request. */
export interface Target {
  readonly key: string;
  readonly name: string;
  readonly server: ServeProcess;
  readonly servicePid?: number;
  readonly send: () => Promise<void>;
  close(): Promise<void>;
}

export async function tritiumTarget(
  context: TargetContext,
  root: string,
  key: string,
  name: string,
  variant: Variant,
  model: ClassifierModel = 'onnx',
  texts: readonly string[] = SENTENCES,
  instances: CpuInstances = 'seed-count',
): Promise<Target> {
  context.log(`${key} ${name}: starting tritium serve`);
  const server = await startTritium(writeRepository(root, variant, model, instances));
  const client = new tritonHttp.InferenceServerClient(server.httpUrl, { concurrency: context.maxConcurrency });
  const inputs = texts.map((s) => [new InferInput('TEXT', [1, 1], 'BYTES').setData([s])]);
  const outputs = [new InferRequestedOutput('LOGITS')];
  let i = 0;
  return {
    key,
    name,
    server,
    send: async () => {
      const result = await client.infer('sentiment_ensemble', inputs[i++ % inputs.length]!, { outputs });
      if (result.asTypedArray('LOGITS', 'FP32').length !== 2) throw new Error('bad LOGITS');
    },
    close: async () => {
      client.close();
      await server.stop();
    },
  };
}

export async function microserviceTarget(context: TargetContext, root: string, tokenizerDir: string, key = '(d)', model: ClassifierModel = 'onnx'): Promise<Target> {
  const name = `microservice: preprocessing HTTP service → Tritium bert_classifier${model === 'onnx' ? '' : ` (${model})`} over gRPC`;
  context.log(`${key} ${name}: starting tritium serve + the service`);
  const server = await startTritium(writeRepository(root, 'model-only', model));
  const child = spawn(process.execPath, [join(HERE, 'microservice.js'), tokenizerDir, server.grpcUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stopChild = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  let port: number;
  try {
    port = await new Promise<number>((ok, fail) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /listening (\d+)/.exec(out);
        if (m) ok(Number(m[1]));
      });
      child.once('exit', (code) => fail(new Error(`microservice exited (${code})`)));
    });
  } catch (error) {
    await server.stop();
    throw error;
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: context.maxConcurrency });
  const bodies = SENTENCES.map((s) => JSON.stringify({ text: s }));
  let i = 0;
  const send = () =>
    new Promise<void>((ok, fail) => {
      const body = bodies[i++ % bodies.length]!;
      const req = http.request(
        { host: '127.0.0.1', port, path: '/classify', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { logits?: number[]; error?: string };
            if (res.statusCode === 200 && reply.logits?.length === 2) ok();
            else fail(new Error(`microservice: ${res.statusCode} ${reply.error ?? ''}`));
          });
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  return {
    key,
    name,
    server,
    servicePid: child.pid,
    send,
    close: async () => {
      agent.destroy();
      await stopChild();
      await server.stop();
    },
  };
}
