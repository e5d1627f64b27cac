/**
 * The local copy of a remote repository, owned by the server: each model folder is brought in line
 * with the store before the repository reads it, downloading only files whose ETag or size changed
 * since the last sync (a manifest per model remembers them, across restarts when the cache folder
 * is kept).
 *
 * Never a partial model: every top-level entry of a model folder (a version folder, `configs/`, a
 * label file, `config.pbtxt`) is rebuilt beside the live copy in `staging/`, files downloaded to
 * fresh names and checked (size, ETag), unchanged files hard-linked from the live copy, and only
 * then renamed into place, one rename per entry. A failed or cut download leaves the live copy as
 * it was, so the models serving from it keep serving. Unchanged entries are not touched at all,
 * so their change stamps stay the same and poll mode does not reload them.
 *
 * Layout under `root`: `models/<model>/…` (what the repository reads), `state/<model>.json`
 * (manifests), `staging/` and `trash/` (same file system, so renames are atomic).
 *
 * Concurrency: one sync at a time per mirror (the server's model-control operations are serialized).
 */
import { randomBytes } from 'node:crypto';
import { copyFile, link, lstat, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { InferError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { silentLogger } from '../../logger.ts';
import { checkRelativePath } from '../source/relative-path.ts';
import type { RepositoryEntry, RepositorySource } from '../source/repository-source.ts';
import { downloadFile } from './download-file.ts';
import { ensurePrivateFolder } from './private-folder.ts';

export interface MirrorOptions {
  /** Most files one model folder may hold (default 10,000). */
  readonly maxFiles?: number;
  /** A download with no byte for this long fails (default 60 s). */
  readonly idleTimeoutMs?: number;
  /** Downloads running at once per model (default 4). */
  readonly concurrency?: number;
  readonly log?: Logger;
}

export interface SyncResult {
  /** The model's local folder (absent when the store holds no file for it). */
  readonly dir: string;
  readonly filesDownloaded: number;
  readonly bytesDownloaded: number;
}

/** Manifest: path below the model folder → what was downloaded there. Folder markers have etag ''. */
type Manifest = Map<string, { readonly etag: string; readonly size: number }>;

interface RemoteFile {
  readonly rel: string;
  readonly segments: readonly string[];
  readonly entry: RepositoryEntry;
}

export class RepositoryMirror {
  /** Folder holding the local model folders (the repository root the model code reads). */
  readonly modelsRoot: string;
  private readonly stateRoot: string;
  private readonly stagingRoot: string;
  private readonly trashRoot: string;
  private readonly maxFiles: number;
  private readonly idleTimeoutMs: number;
  private readonly concurrency: number;
  private readonly log: Logger;
  private prepared: Promise<void> | undefined;

  constructor(
    readonly source: RepositorySource,
    readonly root: string,
    options: MirrorOptions = {},
  ) {
    this.modelsRoot = path.join(root, 'models');
    this.stateRoot = path.join(root, 'state');
    this.stagingRoot = path.join(root, 'staging');
    this.trashRoot = path.join(root, 'trash');
    this.maxFiles = options.maxFiles ?? 10_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.log = options.log ?? silentLogger;
  }

  /** Local folder of model `name` (a name already checked with assertSafeModelName). */
  modelDir(name: string): string {
    return path.join(this.modelsRoot, name);
  }

  /** Creates the private folders once; clears what an interrupted sync left in staging/trash. */
  private prepare(): Promise<void> {
    this.prepared ??= (async () => {
      for (const dir of [this.root, this.modelsRoot, this.stateRoot, this.stagingRoot, this.trashRoot]) {
        await ensurePrivateFolder(dir);
      }
      for (const dir of [this.stagingRoot, this.trashRoot]) {
        for (const name of await readdir(dir)) await rm(path.join(dir, name), { recursive: true, force: true });
      }
    })();
    this.prepared.catch(() => (this.prepared = undefined));
    return this.prepared;
  }

  /** Brings the local copy of model `name` in line with the store. Rejects (live copy untouched) on any failure. */
  async sync(name: string): Promise<SyncResult> {
    await this.prepare();
    const dir = this.modelDir(name);
    const remote = await this.listModel(name);
    const manifest = await this.readManifest(name);
    const units = new Map<string, RemoteFile[]>();
    for (const f of remote) {
      const unit = f.segments[0]!;
      if (!units.has(unit)) units.set(unit, []);
      units.get(unit)!.push(f);
    }
    await ensurePrivateFolder(dir);
    const counters = { files: 0, bytes: 0 };
    const next: Manifest = new Map();
    const localNames = new Set(await readdir(dir));

    for (const [unit, files] of [...units.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      const single = files.length === 1 && files[0]!.segments.length === 1 && files[0]!.entry.kind === 'file';
      for (const f of files) next.set(f.rel, { etag: f.entry.kind === 'dir' ? '' : f.entry.etag, size: f.entry.size });
      if (await this.unchanged(dir, files, manifest, unit, localNames.has(unit))) continue;
      if (single) await this.replaceFile(name, dir, files[0]!, counters);
      else await this.replaceFolder(name, dir, unit, files, manifest, counters);
    }
    // Entries the store no longer has (and leftovers nobody listed) leave the local copy.
    for (const local of localNames) {
      if (!units.has(local)) await this.discard(path.join(dir, local));
    }
    await this.writeManifest(name, next);
    if (counters.files > 0) {
      this.log.verbose(1, `fetched ${counters.files} file(s), ${counters.bytes} bytes, of model '${name}' from ${this.source.url}`);
    }
    return { dir, filesDownloaded: counters.files, bytesDownloaded: counters.bytes };
  }

  /** Removes the whole local copy of model `name` (the store no longer has it). */
  async forget(name: string): Promise<void> {
    await this.prepare();
    await this.discard(this.modelDir(name));
    await rm(this.manifestPath(name), { force: true });
  }

  private async listModel(name: string): Promise<RemoteFile[]> {
    const entries = await this.source.list(name, { recursive: true });
    if (entries.length > this.maxFiles) {
      throw new InferError('INVALID_ARG', `model '${name}' in repository '${this.source.url}' has more than ${this.maxFiles} files`);
    }
    const out: RemoteFile[] = [];
    const files = new Set<string>();
    for (const entry of entries) {
      if (!entry.path.startsWith(`${name}/`)) {
        throw new InferError('INTERNAL', `repository '${this.source.url}' listed '${entry.path}' outside model folder '${name}'`);
      }
      const rel = entry.path.slice(name.length + 1);
      const segments = checkRelativePath(rel, this.source.url);
      if (entry.kind === 'file') files.add(rel);
      out.push({ rel, segments, entry });
    }
    // A key that is both a file and a folder (`1/a` and `1/a/b`) cannot be laid out on disk.
    for (const f of out) {
      for (let i = 1; i < f.segments.length; i++) {
        const parent = f.segments.slice(0, i).join('/');
        if (files.has(parent)) {
          throw new InferError('INVALID_ARG', `refusing object '${name}/${f.rel}' in repository '${this.source.url}': '${parent}' is also a file`);
        }
      }
    }
    return out.sort((a, b) => a.rel.localeCompare(b.rel));
  }

  /** True when the manifest already records exactly these files and the local copy still holds them. */
  private async unchanged(dir: string, files: readonly RemoteFile[], manifest: Manifest, unit: string, present: boolean): Promise<boolean> {
    if (!present) return false;
    const recorded = [...manifest.keys()].filter((k) => k === unit || k.startsWith(`${unit}/`));
    if (recorded.length !== files.length) return false;
    for (const f of files) {
      const m = manifest.get(f.rel);
      const etag = f.entry.kind === 'dir' ? '' : f.entry.etag;
      if (!m || m.etag !== etag || m.size !== f.entry.size) return false;
      const st = await lstat(path.join(dir, ...f.segments)).catch(() => undefined);
      if (!st || st.isSymbolicLink()) return false;
      if (f.entry.kind === 'dir' ? !st.isDirectory() : !st.isFile() || st.size !== f.entry.size) return false;
    }
    return true;
  }

  private stagingName(): string {
    return path.join(this.stagingRoot, randomBytes(8).toString('hex'));
  }

  /** A top-level file (`config.pbtxt`, a label file): downloaded beside, then renamed over the old one. */
  private async replaceFile(name: string, dir: string, file: RemoteFile, counters: { files: number; bytes: number }): Promise<void> {
    const staged = this.stagingName();
    await downloadFile(this.source, file.entry, staged, { idleTimeoutMs: this.idleTimeoutMs });
    counters.files++;
    counters.bytes += file.entry.size;
    const target = path.join(dir, file.rel);
    const st = await lstat(target).catch(() => undefined);
    if (st?.isDirectory()) await this.discard(target);
    await rename(staged, target);
    this.log.verbose(2, `updated '${name}/${file.rel}' from ${this.source.url}`);
  }

  /** A top-level folder (a version, `configs/`): rebuilt whole in staging, then swapped in. */
  private async replaceFolder(
    name: string,
    dir: string,
    unit: string,
    files: readonly RemoteFile[],
    manifest: Manifest,
    counters: { files: number; bytes: number },
  ): Promise<void> {
    const staged = this.stagingName();
    await mkdir(staged, { mode: 0o700 });
    try {
      const downloads: RemoteFile[] = [];
      for (const f of files) {
        const target = path.join(staged, ...f.segments.slice(1));
        if (f.entry.kind === 'dir') {
          await mkdir(target, { recursive: true, mode: 0o700 });
          continue;
        }
        await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
        const m = manifest.get(f.rel);
        const live = path.join(dir, ...f.segments);
        const st = m && m.etag === f.entry.etag && m.size === f.entry.size ? await lstat(live).catch(() => undefined) : undefined;
        if (st?.isFile() && st.size === f.entry.size) {
          // Unchanged file: the same bytes, no second download (a copy where links are refused).
          await link(live, target).catch(() => copyFile(live, target));
        } else downloads.push(f);
      }
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < downloads.length) {
          const f = downloads[next++]!;
          await downloadFile(this.source, f.entry, path.join(staged, ...f.segments.slice(1)), { idleTimeoutMs: this.idleTimeoutMs });
          counters.files++;
          counters.bytes += f.entry.size;
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.concurrency, downloads.length) }, worker));
      const target = path.join(dir, unit);
      if (await lstat(target).catch(() => undefined)) await this.discard(target);
      await rename(staged, target);
      this.log.verbose(2, `updated '${name}/${unit}/' from ${this.source.url}`);
    } catch (err) {
      await rm(staged, { recursive: true, force: true });
      throw err;
    }
  }

  /** Moves `target` out of the way in one rename, then deletes it. */
  private async discard(target: string): Promise<void> {
    const trash = path.join(this.trashRoot, randomBytes(8).toString('hex'));
    try {
      await rename(target, trash);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    await rm(trash, { recursive: true, force: true });
  }

  private manifestPath(name: string): string {
    return path.join(this.stateRoot, `${name}.json`);
  }

  private async readManifest(name: string): Promise<Manifest> {
    const out: Manifest = new Map();
    try {
      const parsed = JSON.parse(await readFile(this.manifestPath(name), 'utf8')) as unknown;
      if (!Array.isArray(parsed)) return out;
      for (const row of parsed) {
        if (!Array.isArray(row) || typeof row[0] !== 'string' || typeof row[1]?.etag !== 'string' || typeof row[1]?.size !== 'number') continue;
        out.set(row[0], { etag: row[1].etag, size: row[1].size });
      }
    } catch {
      // No manifest (first sync) or an unreadable one: everything is fetched again.
    }
    return out;
  }

  private async writeManifest(name: string, manifest: Manifest): Promise<void> {
    const staged = this.stagingName();
    await writeFile(staged, JSON.stringify([...manifest.entries()]), { mode: 0o600, flag: 'wx' });
    await rename(staged, this.manifestPath(name));
  }
}
