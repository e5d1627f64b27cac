/**
 * Triton's qa/L0_model_config ONNX cases (`autofill_noplatform/onnx` and
 * `autofill_noplatform_success/onnx`, from the corpus CI places beside the repository; see
 * packages/core/test/config/corpus-cases.ts), run through this backend the
 * way Triton loads a model with `--strict-model-config=false`: parse → normalize (core autofill of
 * platform/backend) → the backend's autoComplete → normalize → validate → loadModel (Triton's
 * instance-time config/model checks). Failing cases must be refused with an error matching one
 * `expected*` grep pattern; success cases must produce a config equal to one `expected*` file.
 * The corpus ships the failing cases' model files; `cpu_instance`'s model comes from Triton's private
 * test data, so an equivalent (FP16 identity, [-1,-1,-1]) is generated here.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InferError, InferenceServer, silentLogger, type ModelConfig } from '@tritium/core';
import { modelConfigToJson, normalizeModelConfig, parseModelConfigText, validateModelConfig, type VersionDirEntry } from '@tritium/core/config';
// The corpus case list is core's (shared by every suite that runs a share of the corpus).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { corpusUnavailableReason, loadCorpusCases, matchesExpected, type CorpusCase } from '../../core/test/config/corpus-cases.ts';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { buildIdentityModel } from '@tritium/onnx-gen';
import { onnxBackend } from '../src/index.ts';

/** Triton's L0 suite runs with GPU 0 present (the expected configs say KIND_GPU, gpus: 0). */
const TRITON_CI_GPUS = [0];

/** Model files Triton copies from private test data, regenerated from what the case's config says. */
const GENERATED: Readonly<Record<string, () => Uint8Array>> = {
  // Config: INPUT0/OUTPUT0 TYPE_FP16 dims [-1,-1] with max_batch_size 8 → model shape [-1,-1,-1].
  cpu_instance: () => buildIdentityModel({ dtype: 'FP16', shape: ['batch', -1, -1] }),
};

const scratch = mkdtempSync(path.join(tmpdir(), 'tritium-onnx-corpus-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The case's model folder, with generated model files and the harness's empty version folders. */
function prepare(c: CorpusCase, repository = scratch): string {
  const dir = path.join(repository, c.modelName);
  cpSync(c.folder, dir, { recursive: true });
  for (const v of c.versionDirs) mkdirSync(path.join(dir, v), { recursive: true });
  const generate = GENERATED[c.modelName];
  if (generate) writeFileSync(path.join(dir, '1', 'model.onnx'), generate());
  return dir;
}

function firstVersionDir(modelDir: string): string | undefined {
  const versions = readdirSync(modelDir)
    .filter((f) => /^\d+$/.test(f) && statSync(path.join(modelDir, f)).isDirectory())
    .sort((a, b) => Number(a) - Number(b));
  return versions.length > 0 ? path.join(modelDir, versions[0]!) : undefined;
}

/**
 * Loads the model the way the server does and returns the final config. With `instance`, also
 * starts one instance (a real session in a worker) and disposes it (the InferenceServer suite
 * below starts every instance of the success cases).
 */
async function load(c: CorpusCase, instance = false): Promise<ModelConfig> {
  const modelDir = prepare(c);
  const versionDir = firstVersionDir(modelDir);
  const entries: VersionDirEntry[] | undefined = versionDir
    ? readdirSync(versionDir).map((name) => ({ name, isDirectory: statSync(path.join(versionDir, name)).isDirectory() }))
    : undefined;
  const configFile = path.join(modelDir, 'config.pbtxt');
  const text = existsSync(configFile) ? readFileSync(configFile, 'utf8') : '';
  const options = { modelName: c.modelName, firstVersionEntries: entries, supportedGpus: TRITON_CI_GPUS };
  let config = normalizeModelConfig(parseModelConfigText(text, { file: configFile }), options);
  const backend = onnxBackend();
  config = await backend.autoComplete!({ config, modelDir, versionDir, log: silentLogger });
  config = normalizeModelConfig(config, options);
  validateModelConfig(config, { supportedGpus: TRITON_CI_GPUS, directoryName: c.modelName });
  const model = await backend.loadModel({ config, version: 1, modelDir, versionDir: versionDir!, log: silentLogger });
  if (instance) {
    const group = config.instance_group[0]!;
    const kind = group.kind === 'KIND_GPU' ? 'GPU' : 'CPU';
    const created = await model.createInstance({ name: `${group.name}_0`, kind, device: group.gpus[0] ?? 0, groupName: group.name });
    await created.dispose();
  }
  await model.dispose();
  return config;
}

const unavailable = corpusUnavailableReason();
// The ONNX refusals are this suite's (runner 'onnx-backend'); the ONNX successes are also run here at
// the backend level (the server suite reads them back over HTTP/gRPC).
const cases = loadCorpusCases().filter((c) => c.runner === 'onnx-backend' || c.group === 'autofill_noplatform_success/onnx');

describe('Triton L0_model_config ONNX corpus', () => {
  if (unavailable) {
    console.warn(`skipped: ${unavailable}`);
    it.skip(`skipped: ${unavailable}`, () => {});
    return;
  }

  it('finds both ONNX groups', () => {
    expect(cases.filter((c) => c.outcome === 'fail').length).toBe(7);
    expect(cases.filter((c) => c.outcome === 'success').length).toBe(4);
  });

  for (const c of cases) {
    if (c.outcome === 'fail') {
      it(c.id, async () => {
        const error = await load(c).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(InferError.is(error), `must be refused with an InferError, got ${String(error)}`).toBe(true);
        const message = (error as InferError).message;
        expect(matchesExpected(c, message), `got: ${message}\nexpected one of:\n${c.expected.map((e) => `  ${e.pattern}`).join('\n')}`).toBe(true);
      });
    } else {
      it(c.id, async () => {
        const actual = modelConfigToJson(await load(c));
        const candidates = c.expected.map((e) => modelConfigToJson(parseModelConfigText(e.pattern)));
        expect(candidates, `got ${actual}`).toContain(actual);
      });
    }
  }
});

/** The same cases through core's InferenceServer (repository, autofill, load, instances), as `tritonserver --strict-model-config=false`. */
describe('Triton L0_model_config ONNX corpus through InferenceServer', () => {
  if (unavailable) {
    console.warn(`skipped: ${unavailable}`);
    it.skip(`skipped: ${unavailable}`, () => {});
    return;
  }
  for (const c of cases) {
    it(c.id, async () => {
      const repository = path.join(scratch, 'server', c.modelName);
      prepare(c, repository);
      const server = new InferenceServer({ repositories: [repository], backends: [onnxBackend()], strictModelConfig: false, exitOnError: true });
      const started = await server.start().then(
        () => undefined,
        (e: unknown) => e,
      );
      try {
        if (c.outcome === 'fail') {
          expect(started, 'the server must refuse to start').toBeDefined();
          const message = InferError.is(started) || started instanceof Error ? started.message : String(started);
          const lines = message.split('\n');
          expect(lines.some((l) => matchesExpected(c, l)), `got: ${message}`).toBe(true);
        } else {
          expect(started, String(started)).toBeUndefined();
          // Tritium serves without GPUs, so KIND_AUTO resolves to CPU where Triton's CI had GPU 0:
          // compare everything but instance_group.
          const strip = (config: ModelConfig) => modelConfigToJson({ ...config, instance_group: [] });
          const actual = strip(server.modelConfig(c.modelName));
          const candidates = c.expected.map((e) => strip(parseModelConfigText(e.pattern)));
          expect(candidates, `got ${actual}`).toContain(actual);
        }
      } finally {
        await server.stop();
      }
    });
  }
});
