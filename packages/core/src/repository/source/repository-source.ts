/**
 * The repository-source SPI: where a model repository's files come from. The local file system is
 * the built-in implementation (`localRepositorySource`, read in place); object stores (S3, Azure
 * Blob, GCS) implement the same four calls in their own packages, and the server copies their
 * files into a local cache it owns (`RepositoryMirror`) before the repository code reads them.
 * Nothing above this interface changes per provider.
 *
 * Paths are relative to the repository root, `/`-separated, with no leading slash; a source must
 * never return a path with an empty, `.` or `..` segment (`checkRelativePath` is the one check).
 *
 * Concurrency: the server calls a source from one model-control operation at a time, plus
 * read-only `list('')` calls for the repository index; a source must tolerate concurrent calls.
 */

export type RepositoryEntryKind = 'file' | 'dir';

export interface RepositoryEntry {
  /** Below the repository root, e.g. `resnet/1/model.onnx` (no trailing slash for folders). */
  readonly path: string;
  readonly kind: RepositoryEntryKind;
  /** Files: bytes. Folders: 0. */
  readonly size: number;
  /** Files: changes whenever the content changes (the object's ETag; size + mtime on a local disk). Folders: ''. */
  readonly etag: string;
  /** Files: last modification in ms since the epoch (0 when the source does not know). */
  readonly mtimeMs: number;
}

export interface RepositoryFetch {
  /** The file's bytes, streamed: the caller writes them to disk as they come, never whole in memory. */
  readonly body: AsyncIterable<Uint8Array>;
  /** The ETag the store sent with these bytes; the caller refuses them when it differs from the listed one. */
  readonly etag?: string;
}

export interface RepositoryCallOptions {
  /** Aborts the call (and an open download stream). */
  readonly signal?: AbortSignal;
}

export interface RepositorySource {
  /**
   * The repository as the user wrote it (`s3://bucket/models`, `/srv/models`), safe to print: it
   * appears in every error about this repository and never carries a secret.
   */
  readonly url: string;
  /**
   * Set when the files can be read in place (the local file system): the server then copies
   * nothing and reads this folder directly. Object stores leave it unset.
   */
  readonly localRoot?: string;
  /**
   * Entries directly below folder `dir` (`''` = the root), or with `recursive` every file below
   * it (folders implied by the paths; empty-folder markers may appear as `dir` entries). A folder
   * that does not exist lists as `[]`, except the root of a local repository, which rejects with
   * Triton's `failed to stat file <url>` / `failed to open directory <url>`. Other failures reject
   * with an InferError naming the URL (never a credential).
   */
  list(dir: string, options?: RepositoryCallOptions & { readonly recursive?: boolean }): Promise<RepositoryEntry[]>;
  /** One entry (`''` = the root folder), or undefined when nothing exists there. */
  stat(path: string, options?: RepositoryCallOptions): Promise<RepositoryEntry | undefined>;
  /** Opens one file listed by `list` for streaming into the server's cache. */
  fetch(entry: RepositoryEntry, options?: RepositoryCallOptions): Promise<RepositoryFetch>;
  /** Releases connections. */
  close?(): Promise<void>;
}
