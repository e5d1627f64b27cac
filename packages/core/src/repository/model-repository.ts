/**
 * The model repository: one or more folders of `<model>/config.pbtxt` + `<model>/<version>/`.
 * Scans model folders, reads and completes each model's config (core autofill, the backend's
 * auto-complete, Triton's defaults, validation) and picks the versions its policy serves.
 * Read-only: loading is the server's job.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { Backend } from '../backend/spi.ts';
import { silentLogger, type Logger } from '../logger.ts';
import { findBackend, isEnsembleConfig } from './backend-resolution.ts';
import { runRepositoryAgents } from './repository-agents.ts';
import { defaultConfigCodec, type ConfigCodec } from './config-codec.ts';
import { folderStamp, textStamp } from './fingerprint.ts';
import { RoutineLog } from './routine-log.ts';
import { assertSafeModelName } from './model-name.ts';
import { modelKey } from './model-identifier.ts';
import { assertRealPathInside } from './safe-path.ts';
import { parseVersionDirName, selectVersions } from './version-policy.ts';
import { checkInstancesAcrossVersions } from '../config/validate-instances.ts';
import type { RepositorySource } from './source/repository-source.ts';
import { localRepositorySource } from './source/local-source.ts';
import { RepositoryMirror, type MirrorOptions } from './mirror/repository-mirror.ts';
import type { WorkerPolicy } from '../worker/types.ts';

/** Where a model lives. */
export interface ModelSource {
  readonly name: string;
  /** Its repository as configured, with `--model-namespacing`; '' without (see model-identifier.ts). */
  readonly namespace: string;
  /** The local folder holding the model folder (the repository, or its copy in the cache). */
  readonly repository: string;
  readonly dir: string;
  /** The folder holds files uploaded through the load API (`file:` overrides): its code is untrusted. */
  readonly uploaded?: boolean;
  /** Set for a repository in object storage: `dir` is its local copy, synced before each read. */
  readonly mirror?: RepositoryMirror;
}

export interface ScanResult {
  /** Models by key (`modelKey`): found in exactly one repository, or in one namespace each. */
  readonly models: ReadonlyMap<string, ModelSource>;
  /** Names found in more than one repository without namespacing (Triton refuses to load them). */
  readonly duplicates: ReadonlySet<string>;
  /** Repositories that could not be read, with the reason. */
  readonly errors: readonly string[];
}

export interface ResolvedVersion {
  readonly version: number;
  readonly dir: string;
  /** Changes when any file below the version folder changes (size/mtime). */
  readonly stamp: string;
}

/** A model read from the repository, ready to load. */
export interface ResolvedModel {
  readonly source: ModelSource;
  /** Completed, normalized and validated config. */
  readonly config: ModelConfig;
  /** The backend serving it; undefined for ensembles. */
  readonly backend: Backend | undefined;
  /** Versions the policy selects, ascending. */
  readonly versions: readonly ResolvedVersion[];
  /** Changes when the config or any model-level file (labels, warmup data) changes. */
  readonly stamp: string;
}

export interface RepositoryOptions {
  /** Local folders (paths) and repository sources (object stores, bound by the server per URL scheme). */
  readonly repositories: readonly (string | RepositorySource)[];
  /**
   * Folder for the local copies of object-store repositories (created owner-only; kept, so a
   * restart downloads only what changed). Default: a private temporary folder removed by `dispose()`.
   */
  readonly cacheDir?: string;
  /** Bounds and timeouts of the object-store copies. */
  readonly mirror?: Omit<MirrorOptions, 'log'>;
  readonly backends: readonly Backend[];
  /** `--model-config-name`: use `<model>/configs/<name>.pbtxt` when present. */
  readonly modelConfigName?: string;
  /** `--disable-auto-complete-config`: no backend auto-complete; config.pbtxt then required. */
  readonly disableAutoCompleteConfig?: boolean;
  readonly codec?: ConfigCodec;
  readonly log?: Logger;
  /** `--backend-config` settings by backend name, handed to auto-complete. */
  readonly backendConfig?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Rules for the workers auto-complete starts (LoadSpec.workerPolicy). */
  readonly workerPolicy?: WorkerPolicy;
  /** `--model-namespacing`: each repository is a namespace; names need only be unique within one. */
  readonly namespacing?: boolean;
}

/** Overrides the load API may pass (`config` JSON already parsed; files written to `dir`). */
export interface ReadOverrides {
  readonly config?: ModelConfig;
  readonly dir?: string;
}

async function isDirectory(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isDirectory() ?? false;
}

async function dirEntries(dir: string): Promise<{ name: string; isDirectory: boolean }[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.map((e) => ({ name: e.name, isDirectory: e.isDirectory() }));
}

/** The backend serving `config`, or undefined when none matches (the error is raised later, in Triton's order). */
function findBackendOrUndefined(config: ModelConfig, backends: readonly Backend[]): Backend | undefined {
  try {
    return findBackend(config, backends);
  } catch {
    return undefined;
  }
}

/**
 * `config` with no inputs, outputs or batch inputs/outputs: validating it runs ValidateModelConfig
 * without ValidateModelIOConfig (the I/O checks read only those fields).
 */
function withoutIO(config: ModelConfig): ModelConfig {
  return { ...config, input: [], output: [], batch_input: [], batch_output: [] };
}

async function readIfExists(p: string): Promise<string | undefined> {
  try {
    return await readFile(p, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new InferError('INVALID_ARG', `failed to read text proto from ${p}: ${(err as Error).message}`);
  }
}

/** One configured repository: where its files come from and where the model code reads them. */
interface RepositoryLocation {
  readonly source: RepositorySource;
  /** The namespace of its models: the repository as configured with namespacing, else ''. */
  readonly namespace: string;
  /** Local folder of its model folders: the repository itself, or its copy in the cache. */
  readonly root: string;
  readonly mirror?: RepositoryMirror;
}

/** A cache sub-folder name for a repository URL: readable, unique, safe as one path segment. */
function cacheFolderName(url: string): string {
  const readable = url.replace(/^[a-z0-9]+:\/\//i, (m) => m.slice(0, -3) + '-').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);
  return `${readable}-${createHash('sha256').update(url).digest('hex').slice(0, 12)}`;
}

export class ModelRepository {
  /** Local folders the model code reads, one per repository (a cache folder for object stores). */
  readonly repositories: readonly string[];
  private readonly locations: readonly RepositoryLocation[];
  private readonly codec: ConfigCodec;
  private readonly log: Logger;
  /** What reading a model logs along the way, once per model (polls read every model again). */
  private readonly routine: RoutineLog;
  private readonly cacheDir: string | undefined;
  private readonly ownsCacheDir: boolean;

  constructor(private readonly options: RepositoryOptions) {
    this.codec = options.codec ?? defaultConfigCodec;
    this.log = options.log ?? silentLogger;
    this.routine = new RoutineLog(this.log);
    const sources = options.repositories.map((r) => (typeof r === 'string' ? localRepositorySource(r) : r));
    const remote = sources.some((s) => s.localRoot === undefined);
    this.ownsCacheDir = remote && options.cacheDir === undefined;
    this.cacheDir = options.cacheDir !== undefined
      ? path.resolve(options.cacheDir)
      : remote
        ? path.join(os.tmpdir(), `tritium-repository-cache-${process.pid}-${randomBytes(6).toString('hex')}`)
        : undefined;
    this.locations = sources.map((source, i) => {
      const given = options.repositories[i]!;
      const namespace = options.namespacing ? (typeof given === 'string' ? given : given.url) : '';
      if (source.localRoot !== undefined) return { source, namespace, root: source.localRoot };
      const mirror = new RepositoryMirror(source, path.join(this.cacheDir!, cacheFolderName(source.url)), { ...options.mirror, log: this.log });
      return { source, namespace, root: mirror.modelsRoot, mirror };
    });
    this.repositories = this.locations.map((l) => l.root);
  }

  /** Closes the sources' connections and removes the temporary cache folder (when the server made it). */
  async dispose(): Promise<void> {
    await Promise.all(this.locations.map((l) => l.source.close?.().catch(() => undefined)));
    if (this.ownsCacheDir && this.cacheDir) await rm(this.cacheDir, { recursive: true, force: true });
  }

  private modelSource(location: RepositoryLocation, name: string): ModelSource {
    return { name, namespace: location.namespace, repository: location.root, dir: path.join(location.root, name), mirror: location.mirror };
  }

  /** Lists model folders of every repository. Hidden folders (`.git`) are skipped. */
  async scan(): Promise<ScanResult> {
    const models = new Map<string, ModelSource>();
    const duplicates = new Set<string>();
    const errors: string[] = [];
    for (const location of this.locations) {
      let entries;
      try {
        entries = await location.source.list('');
      } catch (err) {
        errors.push(InferError.from(err).message);
        continue;
      }
      for (const entry of entries) {
        const name = entry.path;
        if (name.startsWith('.') || entry.kind !== 'dir') continue;
        const key = modelKey(location.namespace, name);
        if (models.has(key) || duplicates.has(key)) {
          duplicates.add(key);
          models.delete(key);
          continue;
        }
        models.set(key, this.modelSource(location, name));
      }
    }
    return { models, duplicates, errors };
  }

  /**
   * Checks that every repository can be listed (startup). Resolves with Triton's messages for
   * those that cannot: `failed to stat file <path>` when a local path does not exist, `failed to
   * open directory <path>` when it is not a directory or cannot be listed; for an object store,
   * the source's error naming its URL (missing bucket, refused credentials, unreachable endpoint).
   */
  async checkRepositories(): Promise<string[]> {
    const errors: string[] = [];
    for (const location of this.locations) {
      await location.source.list('').catch((err: unknown) => errors.push(InferError.from(err).message));
    }
    return errors;
  }

  /**
   * Makes the model's local folder current: for an object store, syncs its copy in the cache
   * (downloading only what changed); nothing for a local repository.
   */
  async localize(source: ModelSource): Promise<void> {
    if (source.mirror) await source.mirror.sync(source.name);
  }

  /**
   * Finds a model by name (explicit loads), with Triton's errors for missing and (without
   * namespacing) duplicate names; with namespacing, one source per repository holding it.
   */
  async findAll(name: string): Promise<ModelSource[]> {
    assertSafeModelName(name);
    const found: ModelSource[] = [];
    for (const location of this.locations) {
      if ((await location.source.stat(name))?.kind === 'dir') found.push(this.modelSource(location, name));
    }
    if (found.length === 0) {
      throw new InferError('INVALID_ARG', `failed to poll model '${name}': model not found in any model repository.`);
    }
    if (found.length > 1 && !this.options.namespacing) {
      throw new InferError('INVALID_ARG', `failed to poll model '${name}': not unique across all model repositories`);
    }
    return found;
  }

  /** The one model named `name`, with Triton's errors for a missing name and one in several repositories. */
  async find(name: string): Promise<ModelSource> {
    const found = await this.findAll(name);
    if (found.length > 1) throw new InferError('INVALID_ARG', `failed to poll model '${name}': not unique across all model repositories`);
    return found[0]!;
  }

  /** Path of the config file this model uses (`configs/<name>.pbtxt` when selected and present). */
  async configPath(dir: string): Promise<string> {
    const custom = this.options.modelConfigName;
    if (custom) {
      const candidate = path.join(dir, 'configs', `${custom}.pbtxt`);
      if ((await stat(candidate).catch(() => undefined))?.isFile()) return candidate;
    }
    return path.join(dir, 'config.pbtxt');
  }

  /**
   * Reads one model: config (or override), autofill, auto-complete, defaults, validation, the
   * versions its policy selects and change stamps. Throws INVALID_ARG with Triton's messages.
   */
  async read(source: ModelSource, overrides: ReadOverrides = {}): Promise<ResolvedModel> {
    assertSafeModelName(source.name);
    const dir = overrides.dir ?? source.dir;
    if (!overrides.dir) await this.localize(source);
    if (!overrides.dir) await assertRealPathInside(source.repository, dir, 'model folder');
    const autoComplete = !this.options.disableAutoCompleteConfig;

    let config: ModelConfig;
    let configText: string;
    if (overrides.config) {
      config = overrides.config;
      configText = JSON.stringify(config, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    } else {
      const file = await this.configPath(dir);
      const text = await readIfExists(file);
      if (text === undefined && !autoComplete) {
        throw new InferError('INVALID_ARG', `failed to read text proto from ${file}: file not found`);
      }
      configText = text ?? '';
      config = this.codec.parseText(configText, file);
    }
    // Triton runs the config's repository agents (checksum) on the model folder before anything else.
    await runRepositoryAgents(config, dir);
    const versionDirs = await this.versionDirs(source, dir, !!overrides.dir);
    const firstName = [...versionDirs.keys()].map(String).sort()[0];
    const firstVersionEntries = firstName ? await dirEntries(versionDirs.get(Number(firstName))!) : undefined;
    const context = { modelName: source.name, firstVersionEntries };
    // Triton's order (ModelRepositoryManager::InitializeModelInfo): normalize, ValidateModelConfig,
    // ValidateModelIOConfig only when auto-complete is off, name check. The backend's auto-complete
    // runs when the model loads (TritonModel::Create), then normalize and the full validation again
    // (TritonModel::UpdateModelConfig). So the config-level rules, the dynamic batching preferred
    // sizes against max_batch_size included, apply to the config as written; inputs and outputs
    // are checked once the backend has completed them.
    config = this.codec.normalize(config, context);
    const backend = isEnsembleConfig(config) ? undefined : findBackendOrUndefined(config, this.options.backends);
    const completes = autoComplete && backend?.autoComplete !== undefined;
    // With auto-complete on, a backend that is not there fails the load (TritonModel::Create: "unable
    // to find backend library") before inputs and outputs are ever checked: a DALI or FIL config
    // whose I/O its backend would complete is refused for the missing backend, not for the I/O.
    const ioLater = completes || (autoComplete && !backend && !isEnsembleConfig(config));
    // The ensemble's own rules (steps, data flow) are part of the config validation.
    this.codec.validate(ioLater ? withoutIO(config) : config, source.name);

    // No backend matched: Triton's "unable to find backend library", after the config checks.
    if (!isEnsembleConfig(config) && !backend) findBackend(config, this.options.backends);
    if (backend) {
      if (completes && backend.autoComplete) {
        const latest = Math.max(...versionDirs.keys());
        config = await backend.autoComplete({
          config,
          modelDir: dir,
          versionDir: versionDirs.size > 0 ? versionDirs.get(latest) : undefined,
          log: this.routine.for(source.name),
          backendConfig: this.options.backendConfig?.[backend.name],
          ...(this.options.workerPolicy ? { workerPolicy: this.options.workerPolicy } : {}),
          ...(source.uploaded || overrides.dir ? { uploadedFiles: true } : {}),
        });
        config = this.codec.normalize(config, context);
        this.codec.validate(config, source.name);
      }
    }

    const selected = selectVersions(config.name, config.version_policy, [...versionDirs.keys()]);
    checkInstancesAcrossVersions(config, selected.length);
    const versions = await Promise.all(
      selected.map(async (version) => {
        const vdir = versionDirs.get(version)!;
        return { version, dir: vdir, stamp: await folderStamp(vdir) };
      }),
    );
    const stamp = textStamp(configText + '\0' + (await this.modelLevelStamp(dir, versionDirs)));
    return { source: { ...source, dir }, config, backend, versions, stamp };
  }

  /** Numeric version folders, each checked to stay inside the repository (symlinks included). */
  private async versionDirs(source: ModelSource, dir: string, overridden: boolean): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const version = parseVersionDirName(name);
      if (version === undefined) continue;
      const vdir = path.join(dir, name);
      if (!(await isDirectory(vdir))) continue;
      if (!overridden) await assertRealPathInside(source.repository, vdir, 'version folder');
      out.set(version, vdir);
    }
    return out;
  }

  /** Stamp of everything in the model folder except the version folders and the config itself. */
  private async modelLevelStamp(dir: string, versionDirs: ReadonlyMap<number, string>): Promise<string> {
    const skip = new Set([...versionDirs.values()].map((v) => path.basename(v)));
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => !skip.has(n)).sort();
    const parts = await Promise.all(
      names.map(async (n) => {
        const p = path.join(dir, n);
        const st = await stat(p, { bigint: true }).catch(() => undefined);
        if (!st) return n;
        return st.isDirectory() ? `${n}/${await folderStamp(p)}` : `${n}:${st.size}:${st.mtimeNs}`;
      }),
    );
    return parts.join('\n');
  }
}
