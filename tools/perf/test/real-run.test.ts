import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerfClient, parsePerfArgs, runPerf, toInferInputs, type PerfOptions } from '../src/index.ts';

/** A short real run: `tritium serve` (child process) with a python-like echo model, then `tritium perf`'s runner over HTTP and gRPC. */
const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../../apps/server/bin/tritium.mjs');

const CONFIG = `name: "echo"
backend: "python"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
dynamic_batching { max_queue_delay_microseconds: 100 }
instance_group [ { count: 1 kind: KIND_CPU } ]
`;
const MODEL = `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => {
      const x = getInputTensorByName(r, 'INPUT0')!;
      return new InferenceResponse({ outputTensors: [new Tensor('OUTPUT0', x.data as Float32Array, x.shape)] });
    });
  }
}
`;

// Decoupled: three responses per request, the last one flagged final.
const TRIPLE_CONFIG = `name: "triple"
backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`;
const TRIPLE = `import { InferenceResponse, TRITONSERVER_RESPONSE_COMPLETE_FINAL, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    for (const r of requests) {
      const sender = r.getResponseSender();
      for (let k = 0; k < 3; k++) sender.send(new InferenceResponse([new Tensor('OUT', Int32Array.of(k), [1])]), k === 2 ? TRITONSERVER_RESPONSE_COMPLETE_FINAL : 0);
    }
    return undefined;
  }
}
`;
// Decoupled: answers once at once and ends the request 400 ms later (a model-side timer), so a
// client that completes a request at its first response is done long before the final one.
const LATE_CONFIG = TRIPLE_CONFIG.replace('"triple"', '"late"');
const LATE = `import { InferenceResponse, TRITONSERVER_RESPONSE_COMPLETE_FINAL, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
const out = (k: number) => new InferenceResponse([new Tensor('OUT', Int32Array.of(k), [1])]);
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    for (const r of requests) {
      const sender = r.getResponseSender();
      sender.send(out(1));
      setTimeout(() => sender.send(out(2), TRITONSERVER_RESPONSE_COMPLETE_FINAL), 400);
    }
    return undefined;
  }
}
`;

// Decoupled: answers once at once, then ends the request 400 ms later with the final flag alone (no
// response): perf_analyzer's latency runs to the response, the closed loop waits for the flag.
const FLAG_LATER_CONFIG = TRIPLE_CONFIG.replace('"triple"', '"flag_later"');
const FLAG_LATER = `import { InferenceResponse, TRITONSERVER_RESPONSE_COMPLETE_FINAL, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    for (const r of requests) {
      const sender = r.getResponseSender();
      sender.send(new InferenceResponse([new Tensor('OUT', Int32Array.of(1), [1])]));
      setTimeout(() => sender.send(undefined, TRITONSERVER_RESPONSE_COMPLETE_FINAL), 400);
    }
    return undefined;
  }
}
`;

describe('tritium perf against a running server', () => {
  let dir: string;
  let child: ChildProcess;
  let httpUrl = '';
  let grpcUrl = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'perf-real-'));
    mkdirSync(join(dir, 'repo', 'echo', '1'), { recursive: true });
    writeFileSync(join(dir, 'repo', 'echo', 'config.pbtxt'), CONFIG);
    writeFileSync(join(dir, 'repo', 'echo', '1', 'model.ts'), MODEL);
    for (const [name, config, model] of [['triple', TRIPLE_CONFIG, TRIPLE], ['late', LATE_CONFIG, LATE], ['flag_later', FLAG_LATER_CONFIG, FLAG_LATER]] as const) {
      mkdirSync(join(dir, 'repo', name, '1'), { recursive: true });
      writeFileSync(join(dir, 'repo', name, 'config.pbtxt'), config);
      writeFileSync(join(dir, 'repo', name, '1', 'model.ts'), model);
    }
    child = spawn(process.execPath, [BIN, 'serve', '--model-repository', join(dir, 'repo'), '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0', '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', '--metrics-address', '127.0.0.1',
      // Inference behind a key, as a platform team might run it: perf's -H must carry it, over both protocols.
      '--http-restricted-api=inference:perf-key=secret', '--grpc-restricted-protocol=inference:perf-key=secret'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`server did not start:\n${text}`)), 60_000);
      const onData = (c: Buffer) => {
        text += c.toString();
        const h = /Started HTTPService at [^:\s]+:(\d+)/.exec(text);
        const g = /Started GRPCInferenceService at [^:\s]+:(\d+)/.exec(text);
        if (h && g) {
          clearTimeout(timer);
          httpUrl = `127.0.0.1:${h[1]}`;
          grpcUrl = `127.0.0.1:${g[1]}`;
          ready();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        fail(new Error(`server exited (${code}):\n${text}`));
      });
    });
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['http', 'grpc'] as const)('measures concurrency 1:2 over %s with server-side stats, CSV and plot', async (protocol) => {
    const csv = join(dir, `${protocol}.csv`);
    const svg = join(dir, `${protocol}.svg`);
    const options = parsePerfArgs([
      '-m', 'echo', '-i', protocol, '-u', protocol === 'http' ? httpUrl : grpcUrl,
      '--concurrency-range', '1:2', '-p', '150', '-r', '3', '-b', '2', '--input-data', 'random', '-f', csv, '--plot', svg,
      // Triton's gRPC restriction reads metadata `triton-grpc-protocol-<key>`; HTTP's reads the header itself.
      '-H', `${protocol === 'grpc' ? 'triton-grpc-protocol-' : ''}Perf-Key: secret`, '--request-parameter', 'note:from perf:string',
    ]) as PerfOptions;
    let printed = '';
    const results = await runPerf(options, { write: (t) => (printed += t) });
    expect(results.map((r) => r.level)).toEqual([1, 2]);
    for (const r of results) {
      expect(r.requestCount).toBeGreaterThan(0);
      expect(r.throughput).toBeGreaterThan(0);
      expect(r.server!.requestCount).toBeGreaterThan(0);
      expect(r.server!.computeInferUs).toBeGreaterThan(0);
      expect(r.server!.inferenceCount).toBe(r.server!.requestCount * 2);
    }
    expect(printed).toContain('Request concurrency: 2');
    expect(printed).toContain('  Pass [1] throughput:');
    expect(printed).toContain('Avg request latency:');
    const lines = readFileSync(csv, 'utf8').trim().split('\n');
    expect(lines[0]).toMatch(/^Concurrency,Inferences\/Second,Client Send,/);
    expect(lines).toHaveLength(3);
    expect(readFileSync(svg, 'utf8')).toContain('<polyline');
  });

  it.each(['http', 'grpc'] as const)('without the -H key the restricted server refuses the run over %s (the control)', async (protocol) => {
    const options = parsePerfArgs(['-m', 'echo', '-i', protocol, '-u', protocol === 'http' ? httpUrl : grpcUrl, '-p', '100', '-r', '2']) as PerfOptions;
    await expect(runPerf(options)).rejects.toThrow(/perf-key/);
  });

  it('measures a decoupled model over one gRPC stream with --streaming', async () => {
    const options = parsePerfArgs([
      '-m', 'triple', '-i', 'grpc', '--streaming', '-u', grpcUrl, '--concurrency-range', '1:2', '-p', '150', '-r', '3',
      '--input-data', 'zero', '-H', 'triton-grpc-protocol-perf-key: secret',
    ]) as PerfOptions;
    const results = await runPerf(options);
    expect(results.map((r) => r.level)).toEqual([1, 2]);
    for (const r of results) {
      expect(r.requestCount).toBeGreaterThan(0);
      expect(r.server!.requestCount).toBeGreaterThan(0);
      // Three responses to every request, over the same windows.
      expect(r.responseThroughput! / r.throughput).toBeCloseTo(3, 6);
    }
  });

  it('times a streamed request to its last response, and sends the next one only after its final flag', async () => {
    const client = createPerfClient('grpc', grpcUrl, 1, { streaming: true, headers: { 'triton-grpc-protocol-perf-key': 'secret' } });
    try {
      const inputs = toInferInputs([{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(0) }]);
      const outcome = await client.infer('flag_later', '', inputs);
      const flagged = performance.now();
      expect(outcome).toMatchObject({ responses: 1 });
      // The flag came on its own ~400 ms after the response (the model's timer); lower bound only.
      expect(flagged - outcome!.lastResponseMs).toBeGreaterThanOrEqual(300);
      expect(await client.infer('triple', '', inputs)).toMatchObject({ responses: 3 });
    } finally {
      client.close();
    }
  });

  it('completes a streamed request at its final response, not its first', async () => {
    const client = createPerfClient('grpc', grpcUrl, 1, { streaming: true, headers: { 'triton-grpc-protocol-perf-key': 'secret' } });
    try {
      const inputs = toInferInputs([{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(0) }]);
      const start = performance.now();
      await client.infer('late', '', inputs);
      // A lower bound only, set by the model's own timer: a busy machine makes it longer, never shorter.
      expect(performance.now() - start).toBeGreaterThanOrEqual(390);
    } finally {
      client.close();
    }
  });

  it.each(['http', 'grpc'] as const)('refuses a decoupled model without --streaming over %s, saying how to measure it', async (protocol) => {
    const options = parsePerfArgs(['-m', 'triple', '-i', protocol, '-u', protocol === 'http' ? httpUrl : grpcUrl, '-p', '100', '-r', '2',
      '-H', `${protocol === 'grpc' ? 'triton-grpc-protocol-' : ''}Perf-Key: secret`]) as PerfOptions;
    await expect(runPerf(options)).rejects.toThrow("model 'triple' is decoupled (model_transaction_policy { decoupled: true }): measure it with -i grpc --streaming");
  });
});
