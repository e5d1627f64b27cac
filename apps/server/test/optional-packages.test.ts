/**
 * Optional packages (apps/server/src/optional/): the backends `tritium serve` binds without loading
 * their packages match the real backends exactly, and an import of a package that is not installed
 * fails with an error naming the package to install. The real thing (a server installed without
 * `@tritium/backend-onnx` refusing an ONNX model by name) is in pack-install.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { onnxBackend } from '@tritium/backend-onnx';
import { tensorrtBackend } from '@tritium/backend-tensorrt';
import type { Backend } from '@tritium/core/backend';
import { optionalOnnxBackend, optionalTensorrtBackend } from '../src/optional/optional-backends.ts';
import { importOptional, installCommand, lazyImport, MissingPackageError, missingPackageOf } from '../src/optional/optional-package.ts';

/** What core matches and schedules a model by, before any model loads. */
function matchedBy(b: Backend) {
  return {
    name: b.name,
    apiVersion: b.apiVersion,
    platforms: b.platforms,
    defaultModelFilename: b.defaultModelFilename,
    parallelInstanceLoading: b.parallelInstanceLoading ?? false,
    autoComplete: typeof b.autoComplete,
  };
}

describe('optional backends', () => {
  it('are matched and scheduled exactly as the backends of their packages', () => {
    expect(matchedBy(optionalOnnxBackend())).toEqual(matchedBy(onnxBackend()));
    expect(matchedBy(optionalTensorrtBackend())).toEqual(matchedBy(tensorrtBackend()));
  });
});

describe('importOptional', () => {
  // A name no registry package has; built at run time so no tool resolves it ahead.
  const absent = ['@tritium', 'not-installed-' + process.pid].join('/');

  it('names the package that is not installed, and how to install it', async () => {
    const err = await importOptional(absent, "backend 'x'", () => import(absent)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPackageError);
    expect((err as MissingPackageError).packageName).toBe(absent);
    expect((err as Error).message).toBe(
      `backend 'x' needs the package ${absent}, which is not installed: install it beside @tritium/server (npm install ${absent})`,
    );
    expect((err as MissingPackageError).code).toBe('INVALID_ARG');
  });

  it('says to skip onnxruntime-node CUDA download when the ONNX backend is missing', () => {
    expect(installCommand('@tritium/backend-onnx')).toBe('ONNXRUNTIME_NODE_INSTALL=skip npm install @tritium/backend-onnx');
    expect(installCommand('@tritium/cache-redis')).toBe('npm install @tritium/cache-redis');
  });

  it('reads the missing package from Node\'s error, scoped or not, and nothing else', () => {
    const notFound = (message: string) => Object.assign(new Error(message), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(missingPackageOf(notFound("Cannot find package 'onnxruntime-node' imported from /app/node_modules/@tritium/backend-onnx/dist/x.js"))).toBe('onnxruntime-node');
    expect(missingPackageOf(notFound("Cannot find package '@tritium/backend-onnx' imported from /app/x.js"))).toBe('@tritium/backend-onnx');
    expect(missingPackageOf(notFound("Cannot find module '/app/dist/gone.js' imported from /app/x.js"))).toBeUndefined();
    expect(missingPackageOf(new Error("Cannot find package 'x'"))).toBeUndefined();
  });

  it('passes other failures through unchanged', async () => {
    const boom = new SyntaxError('bad module');
    await expect(importOptional('pkg', 'need', () => Promise.reject(boom))).rejects.toBe(boom);
  });

  it('loads once for every caller, and tries again after a failure', async () => {
    let calls = 0;
    let fail = true;
    const load = lazyImport('pkg', 'need', async () => {
      calls++;
      if (fail) throw new Error('not yet');
      return { ok: calls };
    });
    await expect(load()).rejects.toThrow('not yet');
    fail = false;
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(b);
    expect(calls).toBe(2);
  });
});
