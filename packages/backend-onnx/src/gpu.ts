/**
 * Whether onnxruntime-node can use a GPU here: it needs the CUDA (or TensorRT) execution-provider
 * library next to its native binding (npm's onnxruntime-node only ships it when its install script
 * downloaded CUDA, which the repo's `.npmrc` does not run) and an NVIDIA driver with a device.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface GpuSupport {
  readonly cuda: boolean;
  readonly tensorrt: boolean;
  /** Why no GPU can be used (empty when `cuda` is true). */
  readonly reason: string;
}

function providerLibraries(): string[] {
  try {
    const pkg = createRequire(import.meta.url).resolve('onnxruntime-node/package.json');
    const dir = join(dirname(pkg), 'bin');
    const found: string[] = [];
    // bin/napi-v*/<platform>/<arch>/
    for (const napi of readdirSync(dir)) {
      const native = join(dir, napi, process.platform, process.arch);
      if (existsSync(native)) found.push(...readdirSync(native));
    }
    return found;
  } catch {
    return [];
  }
}

let cached: GpuSupport | undefined;

/** Probes once per process. */
export function gpuSupport(): GpuSupport {
  if (cached) return cached;
  const libs = providerLibraries();
  const cudaLib = libs.some((f) => f.includes('providers_cuda'));
  const trtLib = libs.some((f) => f.includes('providers_tensorrt'));
  const driver = existsSync('/dev/nvidiactl') || existsSync('/proc/driver/nvidia/version');
  let reason = '';
  if (!driver) reason = 'no NVIDIA driver or device is present';
  else if (!cudaLib) reason = "onnxruntime-node was installed without its CUDA execution provider (libonnxruntime_providers_cuda)";
  cached = { cuda: driver && cudaLib, tensorrt: driver && cudaLib && trtLib, reason };
  return cached;
}
