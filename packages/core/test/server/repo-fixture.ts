/** Builds throwaway model repositories in the OS temp folder for repository and server tests. */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface FixtureModel {
  /** config.pbtxt text; omitted = no config file. */
  readonly config?: string;
  /** Version folders to create, with optional files inside. */
  readonly versions?: Readonly<Record<string, Readonly<Record<string, string | Uint8Array>>>>;
  /** Extra files relative to the model folder (e.g. `warmup/data`). */
  readonly files?: Readonly<Record<string, string | Uint8Array>>;
}

export async function makeRepo(models: Readonly<Record<string, FixtureModel>>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'tritium-repo-'));
  await writeModels(root, models);
  return root;
}

export async function writeModels(root: string, models: Readonly<Record<string, FixtureModel>>): Promise<void> {
  for (const [name, model] of Object.entries(models)) {
    const dir = path.join(root, name);
    await mkdir(dir, { recursive: true });
    if (model.config !== undefined) await writeFile(path.join(dir, 'config.pbtxt'), model.config);
    for (const [version, files] of Object.entries(model.versions ?? { '1': {} })) {
      await mkdir(path.join(dir, version), { recursive: true });
      for (const [file, content] of Object.entries(files)) await writeFile(path.join(dir, version, file), content);
    }
    for (const [file, content] of Object.entries(model.files ?? {})) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), content);
    }
  }
}

export async function removeRepo(root: string): Promise<void> {
  await rm(root, { recursive: true, force: true });
}

/** An identity-backend model: INPUT0 → OUTPUT0 of `type` and `dims`. */
export function identityConfig(name: string, opts: { maxBatch?: number; dims?: string; type?: string; extra?: string } = {}): string {
  const type = opts.type ?? 'TYPE_FP32';
  const dims = opts.dims ?? '[ 4 ]';
  return `name: "${name}"
backend: "identity"
max_batch_size: ${opts.maxBatch ?? 8}
input [ { name: "INPUT0" data_type: ${type} dims: ${dims} } ]
output [ { name: "OUTPUT0" data_type: ${type} dims: ${dims} } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
${opts.extra ?? ''}`;
}
