import { BACKEND_API_VERSION, type Backend, type BackendModel, type LoadSpec, type WorkerRestartPolicy } from '@tritium/core';
import { autoCompleteFromModel } from './auto-complete-runner.ts';
import { locateModelFile } from './locate-model.ts';
import { sandboxParameters } from './parameters.ts';
import { PythonLikeModel } from './python-like-model.ts';
import { sweepStaleBundles, transpileModel } from './transpile.ts';

/** Options of {@link pythonLikeBackend}. */
export interface PythonLikeBackendOptions {
  /** Folder for transpiled bundles (default `<tmpdir>/tritium-python-like-<uid>`, private to this user); never inside the repository. */
  readonly cacheDir?: string;
  /** Isolation when a config does not set `tritium.isolation` (default `thread`). */
  readonly defaultIsolation?: 'thread' | 'process';
  /** Crash-restart policy of instance workers (core's defaults otherwise). */
  readonly restart?: WorkerRestartPolicy;
}

let loads = 0;


/**
 * The python-like backend (`backend: "python"`): runs a version folder's `model.ts` / `model.js` /
 * `model.mjs`, transpiled with esbuild at load, one sandboxed worker per instance. See the README
 * for the author API and the `tritium.*` config parameters.
 */
export function pythonLikeBackend(options: PythonLikeBackendOptions = {}): Backend {
  return {
    name: 'python',
    apiVersion: BACKEND_API_VERSION,
    platforms: [],
    // Each instance is its own worker (Triton's python backend also loads instances in parallel).
    parallelInstanceLoading: true,
    autoComplete: (spec) => autoCompleteFromModel(spec, options.cacheDir, options.defaultIsolation),
    async loadModel(spec: LoadSpec): Promise<BackendModel> {
      const params = sandboxParameters(spec.config, {
        ...(options.defaultIsolation ? { isolation: options.defaultIsolation } : {}),
        forceProcess: spec.uploadedFiles === true,
        ...(spec.limits ? { limits: spec.limits } : {}),
      });
      if (params.isolationForced) {
        spec.log.warn(
          `model '${spec.config.name}': its files were uploaded through the load API, so its code runs with process isolation ` +
            `(its config asked for 'thread')`,
        );
      }
      const modelFile = await locateModelFile(spec.config, spec.versionDir);
      await sweepStaleBundles(options.cacheDir);
      const bundle = await transpileModel(spec.config.name, modelFile, {
        ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
        tag: `v${spec.version}-${process.pid}-${++loads}`,
      });
      return new PythonLikeModel(spec, modelFile, bundle, params, options.restart ? { restart: options.restart } : {});
    },
  };
}
