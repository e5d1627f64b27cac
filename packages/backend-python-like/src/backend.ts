import { BACKEND_API_VERSION, type Backend, type BackendModel, type LoadSpec } from '@tritium/core/backend';
import { type WorkerRestartPolicy } from '@tritium/core/worker';
import { autoCompleteFromModel } from './auto-complete-runner.ts';
import { locateModelFile } from './locate-model.ts';
import { readinessPolicy, sandboxParameters } from './parameters.ts';
import { PythonLikeModel } from './python-like-model.ts';
import { defaultCacheDir, sweepStaleBundles, transpileModel, type TranspiledModel } from './transpile.ts';
import { applyCheck, checkModel, typeCheckMode, type TypeCheckMode } from './type-check/model-check.ts';
import { installOwnPackages, ownPackageFile } from './own-packages.ts';

/** Options of {@link pythonLikeBackend}. */
export interface PythonLikeBackendOptions {
  /** Folder for transpiled bundles (default `<tmpdir>/tritium-python-like-<uid>`, private to this user); never inside the repository. */
  readonly cacheDir?: string;
  /** Isolation when a config does not set `tritium.isolation` (default `thread`). */
  readonly defaultIsolation?: 'thread' | 'process';
  /** Crash-restart policy of instance workers (core's defaults otherwise). */
  readonly restart?: WorkerRestartPolicy;
  /**
   * What a type error in a model.ts does to its load when its config does not say
   * (`tritium.type_check`): `error` refuses it, `warn` logs it, `off` (the default here; the CLI's
   * is `error`) skips the check. See type-check/model-check.ts.
   */
  readonly typeCheck?: TypeCheckMode;
  /**
   * Models whose instances open Node's inspector on 127.0.0.1 (a free port, its URL logged):
   * `tritium dev --inspect <model>`. They run as worker threads (a debugger attaches to a thread's
   * inspector; a process-isolated config is overridden, with a warning). Never for uploaded models.
   */
  readonly inspect?: readonly string[];
  /**
   * A model folder with its own package.json and lockfile but no node_modules gets `npm ci` at load
   * (`--model-install-dependencies`; default false: the load is refused naming the missing package).
   * Never for a model uploaded through the load API.
   */
  readonly installDependencies?: boolean;
  /** How long the type-check worker stays after its last check (default 30 s; `Infinity` keeps it: `tritium dev`). */
  readonly typeCheckIdleMs?: number;
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
      const readiness = readinessPolicy(spec.config);
      if (params.isolationForced) {
        spec.log.warn(
          `model '${spec.config.name}': its files were uploaded through the load API, so its code runs with process isolation ` +
            `(its config asked for 'thread')`,
        );
      }
      const modelFile = await locateModelFile(spec.config, spec.versionDir);
      if (options.installDependencies && !spec.uploadedFiles) await installOwnPackages(spec.config.name, spec.modelDir, spec.log);
      await sweepStaleBundles(options.cacheDir);
      const bundle = await transpileModel(spec.config.name, modelFile, {
        ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
        tag: `v${spec.version}-${process.pid}-${++loads}`,
      });
      const inspect = options.inspect?.includes(spec.config.name) === true && !spec.uploadedFiles;
      if (inspect && params.isolation === 'process') {
        spec.log.warn(`model '${spec.config.name}': --inspect runs its instances as worker threads (its config asks for process isolation)`);
      }
      const checked = typeChecked(spec, modelFile, bundle, options);
      // A check-only load (tritium config) waits for the check; a serving load runs it beside its instances' start.
      if (spec.checkOnly) await checked;
      return new PythonLikeModel(spec, modelFile, bundle, inspect ? { ...params, isolation: 'thread' } : params, {
        ...(options.restart ? { restart: options.restart } : {}),
        checked,
        inspect,
        readiness,
      });
    },
  };
}

/** The model's type check under its mode: resolves when it passes (or is skipped), rejects INVALID_ARG in `error` mode. */
async function typeChecked(spec: LoadSpec, modelFile: string, bundle: TranspiledModel, options: PythonLikeBackendOptions): Promise<void> {
  // Uploaded files are untrusted: the checker would read files on their behalf. They are not checked.
  const mode = spec.uploadedFiles ? 'off' : typeCheckMode(spec.config, options.typeCheck ?? 'off');
  if (mode === 'off') return;
  const problems = await checkModel({
    config: spec.config,
    modelDir: spec.modelDir,
    modelFile,
    bundle,
    cacheDir: options.cacheDir ?? defaultCacheDir(),
    ownPackages: (await ownPackageFile(spec.modelDir)) !== undefined,
    log: spec.log,
    ...(options.typeCheckIdleMs !== undefined ? { idleMs: options.typeCheckIdleMs } : {}),
  });
  applyCheck(problems, mode, { config: spec.config, log: spec.log });
}
