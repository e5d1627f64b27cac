/**
 * The platform-team example (examples/custom-backend-server): its own server process, with a
 * custom backend bound into the container, serves the `reverse` model over HTTP and gRPC. Run as
 * a process (as its users run it, from its compiled dist/main.js), so this package does not import
 * the example.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GrpcInferenceServerClient, HttpInferenceServerClient, InferInput, InferRequestedOutput } from '@tritium/client';

const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../examples/custom-backend-server');
const child = spawn(
  process.execPath,
  ['dist/main.js', '--model-repository=model_repository', '--http-port=0', '--grpc-port=0', '--allow-metrics=false', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1'],
  { cwd: EXAMPLE, stdio: ['ignore', 'pipe', 'pipe'] },
);
let log = '';
child.stderr.on('data', (c: Buffer) => (log += c.toString()));
child.stdout.on('data', (c: Buffer) => (log += c.toString()));
const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
let ports: { http: number; grpc: number };

beforeAll(async () => {
  ports = await new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const http = /Started HTTPService at 127\.0\.0\.1:(\d+)/.exec(log);
      const grpc = /Started GRPCInferenceService at 127\.0\.0\.1:(\d+)/.exec(log);
      if (http && grpc) {
        clearInterval(timer);
        resolve({ http: Number(http[1]), grpc: Number(grpc[1]) });
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`example server exited early:\n${log}`));
    });
  });
});
afterAll(async () => {
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
});

it('serves the custom backend over HTTP and gRPC, and exits cleanly', async () => {
  const http = new HttpInferenceServerClient(`127.0.0.1:${ports.http}`);
  const grpc = new GrpcInferenceServerClient(`127.0.0.1:${ports.grpc}`);
  try {
    const input = new InferInput('INPUT0', [2], 'BYTES').setData(['tritium', 'abc']);
    const viaHttp = await http.infer('reverse', [input], { outputs: [new InferRequestedOutput('OUTPUT0', { binary: false })] });
    expect(viaHttp.asStrings('OUTPUT0')).toEqual(['muitirt', 'cba']);
    const viaGrpc = await grpc.infer('reverse', [input]);
    expect(viaGrpc.asStrings('OUTPUT0')).toEqual(['muitirt', 'cba']);
    expect((await http.getModelMetadata('reverse')).platform).toBe('reverse');
  } finally {
    http.close();
    grpc.close();
  }
});

it('a second copy on the same port fails in one line naming the flag, not with an uncaught stack', async () => {
  const second = spawn(
    process.execPath,
    ['dist/main.js', '--model-repository=model_repository', `--http-port=${ports.http}`, '--grpc-port=0', '--allow-metrics=false', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1'],
    { cwd: EXAMPLE, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  second.stdout.on('data', (c: Buffer) => (output += c.toString()));
  second.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => second.on('exit', (c) => resolve(c)));
  expect(code).toBe(1);
  expect(output.trim().split('\n')).toEqual([
    expect.stringMatching(
      new RegExp(`\\] failed to start HTTP service: Unavailable - Socket '127\\.0\\.0\\.1:${ports.http}' already in use; choose another port with --http-port \\(0 picks a free one\\)$`),
    ),
  ]);
});
