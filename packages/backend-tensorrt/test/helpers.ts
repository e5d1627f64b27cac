/**
 * Test helpers: the TEST DOUBLE of the shim (test/double/trt_double.c) compiled with the machine's
 * C compiler into a temp folder, double "engine" files, and model folders loaded through the backend.
 */
import { captureLog, loadTestInstance, type LoadedTestInstance } from '@tritium/core/testing';
export { captureLog, type CapturedLog } from '@tritium/core/testing';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '@tritium/core';
import { tensorrtBackend, type TensorrtBackendOptions } from '../src/index.ts';

const DOUBLE_SOURCE = fileURLToPath(new URL('./double/trt_double.c', import.meta.url));

/** A temp folder removed by `dispose()`. */
export class TempDir {
  readonly root = mkdtempSync(join(tmpdir(), 'tritium-trt-'));
  dispose(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Compiles the test double into `dir`; returns the library path. */
export function buildDouble(dir: string): string {
  const out = join(dir, 'libtrt_double.so');
  execFileSync(process.env.CC || 'cc', ['-shared', '-fPIC', '-O1', '-Wall', '-Werror', '-o', out, DOUBLE_SOURCE]);
  return out;
}

/** One I/O line of a double engine. `profiles`: `min/opt/max` per profile (inputs). */
export interface DoubleTensor {
  readonly name: string;
  /** nvinfer1::DataType value (0 FP32, 3 INT32, 8 INT64, ...). */
  readonly type: number;
  readonly dims: readonly number[];
  readonly profiles?: readonly [readonly number[], readonly number[], readonly number[]][];
}

/** The text of a double engine. */
export function doubleEngine(spec: {
  inputs: readonly DoubleTensor[];
  outputs: readonly DoubleTensor[];
  op: 'identity' | 'add' | 'addsub' | `scale ${number}` | 'fail' | 'crash';
  profiles?: number;
}): string {
  const dims = (d: readonly number[]) => d.join(',');
  const lines = ['TRITIUM-TRT-DOUBLE 1', `profiles ${spec.profiles ?? 1}`];
  for (const t of spec.inputs) {
    const profiles = (t.profiles ?? []).map(([a, b, c]) => `${dims(a)}/${dims(b)}/${dims(c)}`).join(' ');
    lines.push(`input ${t.name} ${t.type} ${dims(t.dims)} ${profiles}`.trimEnd());
  }
  for (const t of spec.outputs) lines.push(`output ${t.name} ${t.type} ${dims(t.dims)}`);
  lines.push(`op ${spec.op}`);
  return lines.join('\n') + '\n';
}

/** Writes `<root>/<name>/1/model.plan` (+ config.pbtxt when given); returns the folders. */
export function writeModel(root: string, name: string, engine: string | undefined, configText?: string): { modelDir: string; versionDir: string } {
  const modelDir = join(root, name);
  const versionDir = join(modelDir, '1');
  mkdirSync(versionDir, { recursive: true });
  if (engine !== undefined) writeFileSync(join(versionDir, 'model.plan'), engine);
  if (configText !== undefined) writeFileSync(join(modelDir, 'config.pbtxt'), configText);
  return { modelDir, versionDir };
}

export type Loaded = LoadedTestInstance;

/** Parses + auto-completes + normalizes `configText`, loads the model and creates one instance. */
export async function loadModel(
  root: string,
  name: string,
  engine: string,
  configText: string,
  backendOptions: TensorrtBackendOptions,
  log: Logger = captureLog(),
): Promise<Loaded> {
  const { modelDir, versionDir } = writeModel(root, name, engine);
  return loadTestInstance(tensorrtBackend(backendOptions), name, configText, { backendName: 'tensorrt', modelDir, versionDir, log });
}

export { testRequest as request, neverAborted as signal } from '@tritium/core/testing';
