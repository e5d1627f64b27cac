/** Test helpers: a model folder in a temp dir with a generated model, loaded through the backend. */
import { loadTestInstance, type LoadedTestInstance } from '@tritium/core/testing';
export { captureLog, type CapturedLog } from '@tritium/core/testing';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@tritium/core';
import { onnxBackend, type OnnxBackendOptions } from '../src/index.ts';

export class TempRepo {
  private constructor(readonly root: string) {}

  static async create(): Promise<TempRepo> {
    return new TempRepo(await mkdtemp(join(tmpdir(), 'tritium-onnx-')));
  }

  /** Writes `<root>/<name>/1/<file>` (when bytes given) and returns the model folder. */
  async model(name: string, bytes: Uint8Array | undefined, file = 'model.onnx'): Promise<{ modelDir: string; versionDir: string }> {
    const modelDir = join(this.root, name);
    const versionDir = join(modelDir, '1');
    await mkdir(versionDir, { recursive: true });
    if (bytes) await writeFile(join(versionDir, file), bytes);
    return { modelDir, versionDir };
  }

  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

export type Loaded = LoadedTestInstance;

/** Parses + (auto-completes) + normalizes `configText`, loads the model and creates one instance. */
export async function loadModel(
  repo: TempRepo,
  name: string,
  bytes: Uint8Array | undefined,
  configText: string,
  options: { backend?: OnnxBackendOptions; log?: Logger; kind?: 'CPU' | 'GPU'; autoComplete?: boolean; instance?: boolean } = {},
): Promise<Loaded> {
  const { modelDir, versionDir } = await repo.model(name, bytes);
  return loadTestInstance(onnxBackend({ cores: 2, ...options.backend }), name, configText, {
    backendName: 'onnxruntime',
    modelDir,
    versionDir,
    log: options.log,
    autoComplete: options.autoComplete,
    instance: options.instance === false ? false : { name: `${name}_0`, groupName: name, kind: options.kind },
  });
}

export { testRequest as request, neverAborted as signal } from '@tritium/core/testing';
