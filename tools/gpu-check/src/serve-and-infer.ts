/**
 * gpu-check step 5: serves `<work>/model.plan` through Tritium and runs inferences over HTTP.
 * Prints one line per check; exits 1 at the first failure.
 *
 *   TRITIUM_TRT_SHIM=<libtritium_trt.so> node tools/gpu-check/dist/serve-and-infer.js <work>
 *
 * The engine is Triton's `simple` add/sub in FP32 over [batch, 16] with one profile (batch 1..8).
 * The server is Tritium's own container (HTTP only, port 0) with the stock backends plus
 * `tensorrtBackend()`, and a repository holding only `addsub/1/model.plan` (no config.pbtxt: the
 * backend auto-completes it from the engine).
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
// gpu-check embeds the server's composition root, as examples/custom-backend-server does.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createContainer, defaultBackends, defaultServeOptions, TOKENS, type TritiumServer } from '@tritium/server';
import { TrtShim, resolveShimPath, tensorrtBackend } from '@tritium/backend-tensorrt';
import type { Backend } from '@tritium/core/backend';

const work = process.argv[2];
if (!work) {
  process.stderr.write('usage: serve-and-infer.ts <work dir holding model.plan>\n');
  process.exit(2);
}

let failed = false;
function report(ok: boolean, step: string, detail: string): void {
  process.stdout.write(`[${ok ? 'PASS' : 'FAIL'}] ${step}: ${detail}\n`);
  if (!ok) failed = true;
}

const close = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]!) < 1e-5);

/** 5a. The binding, directly: load the shim, deserialize, list the engine's tensors. */
function checkBinding(shimPath: string): void {
  const shim = TrtShim.load(shimPath);
  const engine = shim.deserialize(readFileSync(join(work, 'model.plan')), 0);
  const info = engine.info();
  engine.destroy();
  report(
    info.tensors.length === 4,
    'binding',
    `${shim.implementation} from ${shimPath}; ${info.numProfiles} profile(s); ` +
      info.tensors.map((t) => `${t.mode} ${t.name} type ${t.trtType} ${JSON.stringify(t.dims)}${t.profiles[0] ? ` max ${JSON.stringify(t.profiles[0].max)}` : ''}`).join('; '),
  );
}

/** 5b. A repository with the engine and no config, served over HTTP by Tritium with the TensorRT backend. */
async function serveEngine(shimPath: string): Promise<{ server: TritiumServer; base: string }> {
  const repo = join(work, 'repo');
  mkdirSync(join(repo, 'addsub', '1'), { recursive: true });
  copyFileSync(join(work, 'model.plan'), join(repo, 'addsub', '1', 'model.plan'));
  const options = { ...defaultServeOptions(), modelRepositories: [repo], httpPort: 0, httpAddress: '127.0.0.1', allowGrpc: false, allowMetrics: false };
  const container = createContainer({ options, backends: defaultBackends() });
  container.bind<Backend>(TOKENS.Backend).toConstantValue(tensorrtBackend({ shimPath }));
  const server = container.get<TritiumServer>(TOKENS.TritiumServer);
  const ports = await server.start();
  return { server, base: `http://127.0.0.1:${ports.http}` };
}

/** The model is ready, and its config is auto-completed from the engine. */
async function checkServing(base: string): Promise<void> {
  const ready = await fetch(`${base}/v2/models/addsub/ready`);
  report(ready.status === 200, 'serve', `tritium HTTP on ${base}, model addsub ready (HTTP ${ready.status})`);
  const config = (await (await fetch(`${base}/v2/models/addsub/config`)).json()) as {
    max_batch_size: number;
    input: { name: string; data_type: string; dims: number[] }[];
    dynamic_batching?: unknown;
  };
  report(
    config.max_batch_size === 8 && config.input.length === 2 && config.dynamic_batching !== undefined,
    'auto-complete',
    `max_batch_size ${config.max_batch_size}, dynamic_batching ${config.dynamic_batching ? 'on' : 'off'}, inputs ${config.input.map((i) => `${i.name} ${i.data_type} ${JSON.stringify(i.dims)}`).join(', ')}`,
  );
}

/** One request of two rows: OUTPUT0 = a + b, OUTPUT1 = a - b. */
async function checkInfer(base: string): Promise<void> {
  const a = Array.from({ length: 32 }, (_, i) => i);
  const b = Array.from({ length: 32 }, (_, i) => 0.5 * i + 1);
  const body = {
    inputs: [
      { name: 'INPUT0', shape: [2, 16], datatype: 'FP32', data: a },
      { name: 'INPUT1', shape: [2, 16], datatype: 'FP32', data: b },
    ],
  };
  const res = await fetch(`${base}/v2/models/addsub/infer`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const json = (await res.json()) as { outputs?: { name: string; shape: number[]; data: number[] }[]; error?: string };
  const sum = json.outputs?.find((o) => o.name === 'OUTPUT0');
  const diff = json.outputs?.find((o) => o.name === 'OUTPUT1');
  report(
    res.status === 200 && !!sum && !!diff && close(sum.data, a.map((v, i) => v + b[i]!)) && close(diff.data, a.map((v, i) => v - b[i]!)),
    'infer',
    res.status === 200 ? `OUTPUT0 ${JSON.stringify(sum?.shape)} [${sum?.data.slice(0, 4).join(', ')}, ...], OUTPUT1 [${diff?.data.slice(0, 4).join(', ')}, ...]` : `HTTP ${res.status}: ${json.error}`,
  );
}

/** Concurrent single-row requests through the dynamic batcher, the statistics, and a batch past the profile refused. */
async function checkBatching(base: string): Promise<void> {
  const many = await Promise.all(
    Array.from({ length: 8 }, async (_, k) => {
      const r = await fetch(`${base}/v2/models/addsub/infer`, {
        method: 'POST',
        body: JSON.stringify({
          inputs: [
            { name: 'INPUT0', shape: [1, 16], datatype: 'FP32', data: Array(16).fill(k) },
            { name: 'INPUT1', shape: [1, 16], datatype: 'FP32', data: Array(16).fill(1) },
          ],
        }),
      });
      const j = (await r.json()) as { outputs?: { name: string; data: number[] }[] };
      return j.outputs?.find((o) => o.name === 'OUTPUT0')?.data[0];
    }),
  );
  report(many.every((v, k) => v === k + 1), 'batched infer', `8 concurrent requests -> OUTPUT0[0] = ${JSON.stringify(many)}`);

  const stats = (await (await fetch(`${base}/v2/models/addsub/stats`)).json()) as { model_stats: { inference_count: number; execution_count: number }[] };
  const s = stats.model_stats[0]!;
  report(true, 'stats', `inference_count ${s.inference_count}, execution_count ${s.execution_count}`);

  const bad = await fetch(`${base}/v2/models/addsub/infer`, {
    method: 'POST',
    body: JSON.stringify({
      inputs: [
        { name: 'INPUT0', shape: [9, 16], datatype: 'FP32', data: Array(144).fill(0) },
        { name: 'INPUT1', shape: [9, 16], datatype: 'FP32', data: Array(144).fill(0) },
      ],
    }),
  });
  const badJson = (await bad.json()) as { error?: string };
  report(bad.status === 400, 'too large a batch', `HTTP ${bad.status}: ${badJson.error}`);
}

async function main(): Promise<void> {
  const shimPath = resolveShimPath();
  checkBinding(shimPath);
  const { server, base } = await serveEngine(shimPath);
  try {
    await checkServing(base);
    await checkInfer(base);
    await checkBatching(base);
  } finally {
    await server.stop();
  }
}

main().then(
  () => process.exit(failed ? 1 : 0),
  (err: unknown) => {
    report(false, 'gpu-check', err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
