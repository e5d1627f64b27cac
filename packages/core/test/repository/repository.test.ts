import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { identityBackend } from '@tritium/core/testing';
import { ModelRepository } from '../../src/repository/model-repository.ts';
import { parseVersionDirName, selectVersions } from '../../src/repository/version-policy.ts';
import { assertSafeModelName } from '../../src/repository/model-name.ts';
import { backendNameOf, findBackend } from '../../src/repository/backend-resolution.ts';
import type { Backend } from '../../src/backend/spi.ts';
import { BACKEND_API_VERSION } from '../../src/backend/spi.ts';
import { identityConfig, makeRepo, removeRepo } from '../server/repo-fixture.ts';

const repos: string[] = [];
afterAll(async () => {
  for (const r of repos) await removeRepo(r);
});
async function repo(models: Parameters<typeof makeRepo>[0]): Promise<string> {
  const r = await makeRepo(models);
  repos.push(r);
  return r;
}

/** Backends the repository resolves to; reading never loads, so no worker starts here. */
const fakeOnnx: Backend = {
  name: 'onnxruntime',
  apiVersion: BACKEND_API_VERSION,
  platforms: ['onnxruntime_onnx'],
  async loadModel() {
    throw new Error('not used');
  },
};
const python: Backend = { ...fakeOnnx, name: 'python', platforms: [] };
const backends = [identityBackend(), fakeOnnx, python];

describe('version folders and policies', () => {
  it('accepts numeric folder names without a leading zero', () => {
    expect(parseVersionDirName('1')).toBe(1);
    expect(parseVersionDirName('12')).toBe(12);
    for (const bad of ['0', '01', 'v1', '1a', '', '-1']) expect(parseVersionDirName(bad)).toBeUndefined();
  });

  it('applies latest / all / specific', () => {
    expect(selectVersions('m', undefined, [3, 1, 2])).toEqual([3]);
    expect(selectVersions('m', { latest: { num_versions: 2 } }, [3, 1, 2])).toEqual([2, 3]);
    expect(selectVersions('m', { all: {} }, [3, 1, 2])).toEqual([1, 2, 3]);
    expect(selectVersions('m', { specific: { versions: [1, 7] } }, [3, 1, 2])).toEqual([1]);
    expect(() => selectVersions('m', { specific: { versions: [7] } }, [1])).toThrow(
      "at least one version must be available under the version policy of model 'm'",
    );
  });

  it('reads the versions a policy selects, ignoring non-numeric folders', async () => {
    const r = await repo({
      m: {
        config: identityConfig('m', { extra: 'version_policy: { latest: { num_versions: 2 } }' }),
        versions: { '1': {}, '2': {}, '3': {}, '03': {}, latest: {} },
      },
    });
    const repository = new ModelRepository({ repositories: [r], backends });
    const model = await repository.read(await repository.find('m'));
    expect(model.versions.map((v) => v.version)).toEqual([2, 3]);
    expect(model.backend?.name).toBe('identity');
    expect(model.config.instance_group[0]!.count).toBe(1);
  });
});

describe('config reading', () => {
  it("refuses a config whose name is not its folder's (Triton's message)", async () => {
    const r = await repo({ folder: { config: identityConfig('other') } });
    const repository = new ModelRepository({ repositories: [r], backends });
    await expect(repository.read(await repository.find('folder'))).rejects.toThrow(
      "unexpected directory name 'folder' for model 'other', directory name must equal model name",
    );
  });

  it('autofills backend and platform from the model file when config.pbtxt is missing', async () => {
    const r = await repo({ auto: { versions: { '1': { 'model.onnx': 'x' } } }, py: { versions: { '1': { 'model.ts': '' } } } });
    const repository = new ModelRepository({ repositories: [r], backends });
    const onnx = await repository.read(await repository.find('auto'));
    expect(onnx.config.name).toBe('auto');
    expect(onnx.config.backend).toBe('onnxruntime');
    expect(onnx.config.platform).toBe('onnxruntime_onnx');
    expect(onnx.config.default_model_filename).toBe('model.onnx');
    expect(onnx.backend).toBe(fakeOnnx);
    const py = await repository.read(await repository.find('py'));
    expect(py.backend).toBe(python);
  });

  it('needs config.pbtxt when auto-complete is disabled', async () => {
    const r = await repo({ noconf: { versions: { '1': { 'model.onnx': 'x' } } } });
    const repository = new ModelRepository({ repositories: [r], backends, disableAutoCompleteConfig: true });
    await expect(repository.read(await repository.find('noconf'))).rejects.toThrow(/failed to read text proto from .*config\.pbtxt/);
  });

  it('runs the backend auto-complete unless disabled', async () => {
    const completing: Backend = {
      ...fakeOnnx,
      async autoComplete({ config }) {
        return {
          ...config,
          input: [{ ...identityInput('IN') }],
          output: [{ ...identityOutput('OUT') }],
        };
      },
    };
    const r = await repo({ ac: { config: 'backend: "onnxruntime"' } });
    const on = new ModelRepository({ repositories: [r], backends: [completing] });
    expect((await on.read(await on.find('ac'))).config.input.map((i) => i.name)).toEqual(['IN']);
    const off = new ModelRepository({ repositories: [r], backends: [completing], disableAutoCompleteConfig: true });
    expect((await off.read(await off.find('ac'))).config.input).toEqual([]);
  });

  describe("validation around the backend's auto-complete (Triton's order)", () => {
    // Fills what the model file would tell: every input's dims and a max_batch_size of 8.
    const filling: Backend = {
      ...fakeOnnx,
      async autoComplete({ config }) {
        return {
          ...config,
          max_batch_size: config.max_batch_size || 8,
          input: config.input.map((io) => (io.dims.length > 0 ? io : { ...io, dims: [4] })),
        };
      },
    };
    const config = (extra: string) => `name: "m"
backend: "onnxruntime"
input [ { name: "IN" data_type: TYPE_FP32 } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
${extra}`;

    it('checks inputs and outputs only after auto-complete, when it is on', async () => {
      const r = await repo({ m: { config: config('') } });
      const on = new ModelRepository({ repositories: [r], backends: [filling] });
      const read = await on.read(await on.find('m'));
      expect(read.config.input[0]!.dims).toEqual([4]);
      expect(read.config.max_batch_size).toBe(8);
      // Auto-complete off: ValidateModelIOConfig runs on the config as written.
      const off = new ModelRepository({ repositories: [r], backends: [filling], disableAutoCompleteConfig: true });
      await expect(off.read(await off.find('m'))).rejects.toThrow("model input 'IN' must specify 'dims' for m");
      // What auto-complete returns is validated in full.
      const broken: Backend = { ...fakeOnnx, autoComplete: async ({ config: c }) => c };
      const unfixed = new ModelRepository({ repositories: [r], backends: [broken] });
      await expect(unfixed.read(await unfixed.find('m'))).rejects.toThrow("model input 'IN' must specify 'dims' for m");
    });

    it('checks config-level rules (preferred batch sizes) on the config as written, before auto-complete', async () => {
      // Triton's InitializeModelInfo runs ValidateModelConfig before the backend completes
      // max_batch_size, so a preferred size above the written max_batch_size (0) is refused even
      // though auto-complete would raise it (same error in Triton: onnxruntime_backend#148).
      const r = await repo({ m: { config: config('dynamic_batching { preferred_batch_size: [ 4 ] }') } });
      const on = new ModelRepository({ repositories: [r], backends: [filling] });
      await expect(on.read(await on.find('m'))).rejects.toThrow('dynamic batching preferred size must be <= max batch size for m');
      const r2 = await repo({ m: { config: config('max_batch_size: 8\ndynamic_batching { preferred_batch_size: [ 4 ] }') } });
      const ok = new ModelRepository({ repositories: [r2], backends: [filling] });
      expect((await ok.read(await ok.find('m'))).config.dynamic_batching?.preferred_batch_size).toEqual([4]);
    });
  });

  it('uses configs/<name>.pbtxt with --model-config-name when present', async () => {
    const r = await repo({
      m: { config: identityConfig('m', { maxBatch: 8 }), files: { 'configs/small.pbtxt': identityConfig('m', { maxBatch: 2 }) } },
    });
    const custom = new ModelRepository({ repositories: [r], backends, modelConfigName: 'small' });
    expect((await custom.read(await custom.find('m'))).config.max_batch_size).toBe(2);
    const missing = new ModelRepository({ repositories: [r], backends, modelConfigName: 'absent' });
    expect((await missing.read(await missing.find('m'))).config.max_batch_size).toBe(8);
  });

  it('names the unknown backend', async () => {
    const r = await repo({ nb: { config: identityConfig('nb').replace('backend: "identity"', 'backend: "nosuch"') } });
    const repository = new ModelRepository({ repositories: [r], backends });
    await expect(repository.read(await repository.find('nb'))).rejects.toThrow("unable to find backend library for backend 'nosuch', try specifying runtime on the model configuration.");
  });

  /** A real config from core's test/config/real-configs (each names its source repository). */
  const realConfig = (file: string): string =>
    readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../config/real-configs', file), 'utf8');

  it("refuses real configs for backends it does not ship with Triton's message, before their I/O", async () => {
    const r = await repo({
      'model.dali': { config: realConfig('dali-unbatched.pbtxt') },
      'small_model-cpu': { config: realConfig('fil-small-model-cpu.pbtxt') },
      // Triton's qa/L0_model_config/autofill_noplatform/custom/unknown_backend.unknown: no config at all.
      'unknown_backend.unknown': {},
    });
    const repository = new ModelRepository({ repositories: [r], backends });
    const refusal = async (name: string) => (await repository.read(await repository.find(name)).catch((e: Error) => e)) as Error;
    // DALI completes the outputs' data types itself: Triton never gets to check them without DALI.
    expect((await refusal('model.dali')).message).toBe(
      "unable to find backend library for backend 'dali', try specifying runtime on the model configuration.",
    );
    expect((await refusal('small_model-cpu')).message).toBe(
      "unable to find backend library for backend 'fil', try specifying runtime on the model configuration.",
    );
    // The whole of that case's `expected` file.
    expect((await refusal('unknown_backend.unknown')).message).toBe(
      "unable to find backend library for backend 'unknown', try specifying runtime on the model configuration.",
    );
    // With auto-complete off Triton checks the I/O as the config is read, so that error comes first.
    const strict = new ModelRepository({ repositories: [r], backends, disableAutoCompleteConfig: true });
    await expect(strict.read(await strict.find('model.dali'))).rejects.toThrow(
      "model output 'DALI_OUTPUT_0' must specify 'data_type' for model.dali",
    );
  });

  it("runs the checksum repository agent as Triton's L0_repoagent_checksum expects, and refuses agents it lacks", async () => {
    const lib = Buffer.from('not really a shared library\n');
    const data = Buffer.from('model-level data\n');
    const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
    const config = realConfig('checksum-agent.pbtxt').replace('4e41030bb1531cd68b2c0277b0aad2e9', md5(data));
    const r = await repo({
      identity_int32: { config, versions: { '1': { 'libtriton_identity.so': lib } }, files: { data_file: data } },
      // server qa/L0_triton_repo_agent/models/relocation_sanity_check: an agent this server does not have.
      relocation_sanity_check: {
        config: `${identityConfig('relocation_sanity_check')}\nmodel_repository_agents { agents [ { name: "relocation", parameters [ { key: "empty_config", value: "true" } ] } ] }`,
      },
      escapes: {
        config: `${identityConfig('escapes')}\nmodel_repository_agents { agents [ { name: "checksum", parameters { key: "MD5:../identity_int32/data_file", value: "${md5(data)}" } } ] }`,
      },
    });
    const repository = new ModelRepository({ repositories: [r], backends });
    const read = (name: string) => repository.find(name).then((s) => repository.read(s));
    await expect(read('identity_int32')).rejects.toThrow(
      `Mismatched MD5 hash for file 1/libtriton_identity.so, expect: invalid_checksum, got: ${md5(lib)}`,
    );
    await writeFile(path.join(r, 'identity_int32', 'config.pbtxt'), config.replaceAll('invalid_checksum', md5(lib)));
    expect((await read('identity_int32')).config.name).toBe('identity_int32');
    await writeFile(path.join(r, 'identity_int32', 'data_file'), 'changed\n');
    await expect(read('identity_int32')).rejects.toThrow(/^Mismatched MD5 hash for file data_file, expect: /);
    await expect(read('relocation_sanity_check')).rejects.toThrow(
      "unable to find 'libtritonrepoagent_relocation.so' for repo agent 'relocation'",
    );
    await expect(read('escapes')).rejects.toThrow(
      "failed to open text file for read ../identity_int32/data_file: checksum file '../identity_int32/data_file' must stay within",
    );
  });

  it('resolves platform names and aliases to our backends', () => {
    expect(backendNameOf({ backend: '', platform: 'onnxruntime_onnx' })).toBe('onnxruntime');
    expect(backendNameOf({ backend: 'tensorrt_plan', platform: '' })).toBe('tensorrt');
    expect(backendNameOf({ backend: '', platform: 'tensorrt_plan' })).toBe('tensorrt');
    expect(findBackend({ ...emptyConfig(), backend: 'onnxruntime_onnx' }, backends)).toBe(fakeOnnx);
  });
});

describe('repositories and path safety', () => {
  it('scans several repositories and reports a name found in two', async () => {
    const a = await repo({ shared: { config: identityConfig('shared') }, onlyA: { config: identityConfig('onlyA') } });
    const b = await repo({ shared: { config: identityConfig('shared') } });
    const repository = new ModelRepository({ repositories: [a, b], backends });
    const scan = await repository.scan();
    expect([...scan.models.keys()]).toEqual(['onlyA']);
    expect([...scan.duplicates]).toEqual(['shared']);
    await expect(repository.find('shared')).rejects.toThrow("failed to poll model 'shared': not unique across all model repositories");
    await expect(repository.find('nope')).rejects.toThrow("failed to poll model 'nope': model not found in any model repository.");
  });

  it('refuses model names that escape the repository', async () => {
    for (const name of ['..', '../x', 'a/b', 'a\\b']) {
      expect(() => assertSafeModelName(name)).toThrow(`invalid model name '${name}', model name must not contain path traversal characters`);
    }
    expect(() => assertSafeModelName('')).toThrow('model name must not be empty');
    const r = await repo({});
    const repository = new ModelRepository({ repositories: [r], backends });
    await expect(repository.find('../etc')).rejects.toThrow(/path traversal/);
  });

  it('refuses model and version folders that are symlinks pointing outside', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'tritium-outside-'));
    repos.push(outside);
    await mkdir(path.join(outside, 'evil', '1'), { recursive: true });
    await writeFile(path.join(outside, 'evil', 'config.pbtxt'), identityConfig('evil'));
    await mkdir(path.join(outside, 'v1'), { recursive: true });
    const r = await repo({ ok: { config: identityConfig('ok'), versions: {} } });
    await symlink(path.join(outside, 'evil'), path.join(r, 'evil'));
    await symlink(path.join(outside, 'v1'), path.join(r, 'ok', '1'));
    const repository = new ModelRepository({ repositories: [r], backends });
    await expect(repository.read(await repository.find('evil'))).rejects.toThrow(/model folder '.*evil' resolves to '.*', outside the model repository/);
    await expect(repository.read(await repository.find('ok'))).rejects.toThrow(/version folder '.*1' resolves to '.*', outside the model repository/);
    await rm(path.join(r, 'evil'));
  });
});

function identityInput(name: string) {
  return { name, data_type: 'TYPE_FP32' as const, format: 'FORMAT_NONE' as const, dims: [4], is_shape_tensor: false, allow_ragged_batch: false, optional: false, is_non_linear_format_io: false };
}
function identityOutput(name: string) {
  return { name, data_type: 'TYPE_FP32' as const, dims: [4], label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false };
}
function emptyConfig() {
  return { name: 'x', platform: '', backend: '', runtime: '', max_batch_size: 0, input: [], output: [], batch_input: [], batch_output: [], instance_group: [], default_model_filename: '', cc_model_filenames: {}, metric_tags: {}, parameters: {}, model_warmup: [] };
}
