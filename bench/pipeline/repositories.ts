import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_REPOSITORY } from '@tritium/example-setup';

/**
 * Model repositories for the benchmark configurations, derived from the example's files by small,
 * named edits: `shipped` is the example as `npm start` serves it; every other variant starts from
 * the seed's configs as written (the example's, without the block it adds below the seed's text).
 * `bert_classifier` runs KIND_CPU here: the benchmark host has no GPU, and that is what the seed's
 * KIND_GPU falls back to (with the seed's count, or Triton's default count for CPU: CpuInstances).
 */
export type Variant = 'pipeline' | 'pipeline-tuned' | 'shipped' | 'pipeline-tokens' | 'per-step' | 'no-batching' | 'model-only';

/** What the example adds below the seed's text of a config (through the end of the file). */
const BEYOND_THE_SEED = /\n# Tritium \(beyond the seed\)[\s\S]*$/;

/** The seed's config as written: the example's without what it adds. */
export function seedConfig(text: string): string {
  return text.replace(BEYOND_THE_SEED, '');
}

/**
 * Length-aware batching (core's ensemble/runtime/length-batching.ts): after the tokenizer, the
 * pipeline batch's rows run in groups of similar length, each at most this many padded tokens.
 */
export const TOKEN_BATCHING = `
parameters { key: "tritium.batch_tokens" value: { string_value: "${process.env['BENCH_BATCH_TOKENS'] ?? '4096'}" } }
parameters { key: "tritium.batch_tokens.lengths" value: { string_value: "tokenized_mask" } }
`;

const DYNAMIC_BATCHING = /\ndynamic_batching \{[^}]*\}\n?/;
const PADDED_BATCHING = `
dynamic_batching {
  preferred_batch_size: [32, 64, 128, 256]
  max_queue_delay_microseconds: 10000
}
parameters { key: "tritium.pad.INPUT_IDS" value: { string_value: "0" } }
parameters { key: "tritium.pad.ATTENTION_MASK" value: { string_value: "0" } }
`;

/**
 * ONNX Runtime's intra-op threads spin while they wait by default; on a 2-core host shared with
 * the HTTP thread, the tokenizer workers and the load generator, spinning steals their CPU. Every
 * configuration (and the (e) limit) runs with spinning off.
 */
export const SESSION_OPTIONS = `
parameters { key: "session.intra_op.allow_spinning" value: { string_value: "0" } }
`;

function edit(path: string, f: (text: string) => string): void {
  writeFileSync(path, f(readFileSync(path, 'utf8')));
}

/**
 * Case (f), the GPU-shaped model: bert_classifier served by the `gpu_sim` test double
 * (packages/backend-examples), whose execute waits 4 ms + 0.02 ms per row on a timer, as a GPU
 * launch does, instead of computing on the CPU. Same inputs and outputs, so the tokenizer, the
 * ensemble and the microservice are unchanged.
 */
export type ClassifierModel = 'onnx' | 'gpu_sim';

const GPU_SIM_PARAMETERS = `
parameters { key: "launch_us" value: { string_value: "4000" } }
parameters { key: "per_row_us" value: { string_value: "20" } }
`;

/**
 * How bert_classifier's GPU instance group (`count: 1`, `kind: KIND_GPU`, `gpus: [ 0 ]`) runs on
 * this GPU-less host. `seed-count`: `count: 1` of KIND_CPU, the seed's count kept (one session with
 * every core as intra-op threads). `cpu-default`: `kind: KIND_CPU` with no count, so the count is
 * Triton's default for a CPU group of ONNX Runtime (2, core's config/normalize.ts), each with
 * cores ÷ 2 intra-op threads (backend-onnx's session-options.ts): what a Triton user's CPU group of
 * this model gets. On this 2-core host: two single-threaded sessions, and one two-threaded session
 * spends 1.1-1.7x the CPU per row of a single-threaded one at 8-128 tokens, in 14 of the 15 shapes
 * bench/ort-threads.bench.ts measures.
 */
export type CpuInstances = 'seed-count' | 'cpu-default';

/** Writes `variant` under `root/<variant>` (with `model` as bert_classifier) and returns its path. */
export function writeRepository(root: string, variant: Variant, model: ClassifierModel = 'onnx', instances: CpuInstances = 'seed-count'): string {
  const dir = join(root, (model === 'onnx' ? variant : `${variant}-${model}`) + (instances === 'cpu-default' ? '-cpu-default' : ''));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const models = variant === 'model-only' ? ['bert_classifier'] : ['tokenizer', 'bert_classifier', 'sentiment_ensemble'];
  for (const m of models) {
    cpSync(join(DEFAULT_REPOSITORY, m), join(dir, m), { recursive: true });
    if (variant !== 'shipped') edit(join(dir, m, 'config.pbtxt'), seedConfig);
  }
  if (model === 'gpu_sim') {
    edit(join(dir, 'bert_classifier', 'config.pbtxt'), (t) => t.replace('platform: "onnxruntime_onnx"', 'backend: "gpu_sim"') + GPU_SIM_PARAMETERS);
    rmSync(join(dir, 'bert_classifier', '1', 'model.onnx'), { force: true });
  } else {
    const cpuGroup = instances === 'cpu-default' ? /count: 1\n\s*kind: KIND_GPU\n\s*gpus: \[ 0 \][^\n]*/ : /kind: KIND_GPU\n\s*gpus: \[ 0 \][^\n]*/;
    edit(join(dir, 'bert_classifier', 'config.pbtxt'), (t) => {
      const cpu = t.replace(cpuGroup, 'kind: KIND_CPU');
      if (cpu === t) throw new Error(`bench: bert_classifier's instance group is not the seed's (count: 1, KIND_GPU, gpus: [ 0 ])`);
      return cpu + SESSION_OPTIONS;
    });
  }
  if (variant === 'pipeline-tuned') {
    // The seed's own advice ("tune max_queue_delay_microseconds"): on this CPU a batch of ~8 is
    // as cheap per sentence as any, so prefer 8 and wait at most 1 ms, at the ensemble and at the
    // tokenizer's own batcher (which may still merge pipeline batches).
    const tuned = '\ndynamic_batching {\n  preferred_batch_size: [8]\n  max_queue_delay_microseconds: 1000\n}\n';
    edit(join(dir, 'sentiment_ensemble', 'config.pbtxt'), (t) => t.replace(DYNAMIC_BATCHING, tuned));
    edit(join(dir, 'tokenizer', 'config.pbtxt'), (t) => t.replace(DYNAMIC_BATCHING, tuned));
  }
  if (variant === 'pipeline-tokens') {
    // The seed's configs as written, with length-aware batching in the ensemble.
    edit(join(dir, 'sentiment_ensemble', 'config.pbtxt'), (t) => t + TOKEN_BATCHING);
  }
  if (variant === 'per-step') {
    // Triton's ensemble semantics: each step enters its composing model's own batcher.
    edit(join(dir, 'sentiment_ensemble', 'config.pbtxt'), (t) => t.replace(DYNAMIC_BATCHING, '\n'));
    edit(join(dir, 'bert_classifier', 'config.pbtxt'), (t) => t + PADDED_BATCHING);
  }
  if (variant === 'no-batching') {
    edit(join(dir, 'sentiment_ensemble', 'config.pbtxt'), (t) => t.replace(DYNAMIC_BATCHING, '\n'));
    edit(join(dir, 'tokenizer', 'config.pbtxt'), (t) => t.replace(DYNAMIC_BATCHING, '\n'));
  }
  return dir;
}
