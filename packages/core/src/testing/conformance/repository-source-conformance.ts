/**
 * The repository-source SPI's contract (repository/source/repository-source.ts), as a suite every
 * source runs (the local folder, S3, Azure Blob, GCS): folder and recursive listings with sizes, a
 * folder that does not exist listing as `[]`; `stat` of files (with an ETag that changes when the
 * content does), folders, the root and missing paths; `fetch` streaming a file's exact bytes, and
 * the server's mirror copying a model into its cache through it (again: nothing downloaded); a file
 * removed after its listing refused with an InferError; and paths that would leave the repository
 * (`..`, absolute, empty segments) refused with INVALID_ARG before anything is asked of the store.
 *
 * The subject opens a fresh repository holding the given files and can rewrite and remove them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InferError } from '../../errors.ts';
import { RepositoryMirror } from '../../repository/mirror/repository-mirror.ts';
import { checkRelativePath } from '../../repository/source/relative-path.ts';
import type { RepositoryEntry, RepositorySource } from '../../repository/source/repository-source.ts';
import type { ConformanceCase, ConformanceSuite } from './conformance-case.ts';

export interface OpenedRepository {
  readonly source: RepositorySource;
  /** Writes (or replaces) one file of the repository, `path` relative to its root. */
  write(path: string, bytes: Uint8Array): Promise<void>;
  /** Removes one file of the repository. */
  remove(path: string): Promise<void>;
  /** Releases the store behind the source (the suite closes the source itself first). */
  dispose?(): Promise<void>;
}

export interface RepositorySourceConformanceSubject {
  /** A source over a fresh repository holding `files` (path relative to the root → bytes). */
  open(files: ReadonlyMap<string, Uint8Array>): Promise<OpenedRepository>;
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
/** Bytes that are not text and span several stream chunks. */
const pattern = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

const FILES: ReadonlyMap<string, Uint8Array> = new Map([
  ['alpha/config.pbtxt', text('name: "alpha"\n')],
  ['alpha/1/model.bin', pattern(1000, 1)],
  ['alpha/1/sub/data.txt', text('nested\n')],
  ['beta/config.pbtxt', text('name: "beta"\n')],
  ['beta/2/weights.bin', pattern(300_000, 2)],
  ['gamma/config.pbtxt', text('name: "gamma"\n')],
  ['delta/1/gone.txt', text('removed by a case\n')],
]);

/** Paths that would leave the repository, each of which every call must refuse. */
const ESCAPES = ['../outside', 'alpha/../../outside', '/etc/passwd', 'alpha//1/model.bin', 'alpha/./1'];

async function bytesOf(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return new Uint8Array(Buffer.concat(chunks));
}

async function refusal(call: () => Promise<unknown>, where: string): Promise<InferError> {
  let failure: unknown;
  try {
    await call();
  } catch (err) {
    failure = err;
  }
  assert.ok(failure !== undefined, `${where}: succeeded`);
  assert.ok(InferError.is(failure), `${where}: expected an InferError, got ${failure instanceof Error ? failure.message : String(failure)}`);
  return failure;
}

const files = (entries: readonly RepositoryEntry[]): string[] => entries.filter((e) => e.kind === 'file').map((e) => e.path).sort();

/** What the cases share: the repository the subject opened (once) and the caches made, removed by `close`. */
class RepositoryFixture {
  readonly caches: string[] = [];
  private opened: Promise<OpenedRepository> | undefined;

  constructor(private readonly subject: RepositorySourceConformanceSubject) {}

  /** The subject's repository holding FILES, opened by the first case that asks. */
  repository(): Promise<OpenedRepository> {
    return (this.opened ??= this.subject.open(FILES));
  }

  async close(): Promise<void> {
    const repo = await this.opened?.catch(() => undefined);
    await repo?.source.close?.();
    await repo?.dispose?.();
    await Promise.all(this.caches.splice(0).map((c) => rm(c, { recursive: true, force: true })));
  }
}

const CASES: readonly { readonly name: string; run(f: RepositoryFixture): Promise<void> }[] = [
  {
    name: 'list gives the model folders at the root and the direct children of a folder',
    async run(f) {
      const { source } = await f.repository();
      const root = await source.list('');
      assert.deepEqual(root.filter((e) => e.kind === 'dir').map((e) => e.path).sort(), ['alpha', 'beta', 'delta', 'gamma']);
      const alpha = await source.list('alpha');
      assert.deepEqual(alpha.map((e) => `${e.path}:${e.kind}`).sort(), ['alpha/1:dir', 'alpha/config.pbtxt:file']);
      assert.equal(alpha.find((e) => e.kind === 'file')!.size, FILES.get('alpha/config.pbtxt')!.byteLength);
    },
  },
  {
    name: 'a recursive list gives every file below a folder, with sizes and safe relative paths',
    async run(f) {
      const { source } = await f.repository();
      const entries = await source.list('alpha', { recursive: true });
      assert.deepEqual(files(entries), ['alpha/1/model.bin', 'alpha/1/sub/data.txt', 'alpha/config.pbtxt']);
      for (const e of entries) {
        checkRelativePath(e.path, source.url);
        if (e.kind === 'file') {
          assert.equal(e.size, FILES.get(e.path)!.byteLength, `${e.path}: size`);
          assert.notEqual(e.etag, '', `${e.path}: a file has an ETag`);
        }
      }
    },
  },
  {
    name: 'a folder that does not exist lists as []',
    async run(f) {
      const { source } = await f.repository();
      assert.deepEqual(await source.list('nowhere'), []);
      assert.deepEqual(await source.list('nowhere', { recursive: true }), []);
    },
  },
  {
    name: 'stat gives files with size and ETag, folders, the root, and undefined for nothing',
    async run(f) {
      const { source } = await f.repository();
      const file = await source.stat('alpha/1/model.bin');
      assert.equal(file?.kind, 'file');
      assert.equal(file.size, 1000);
      assert.notEqual(file.etag, '');
      assert.equal((await source.stat('alpha/1'))?.kind, 'dir');
      assert.equal((await source.stat(''))?.kind, 'dir');
      assert.equal(await source.stat('alpha/2/model.bin'), undefined);
      assert.equal(await source.stat('nowhere'), undefined);
    },
  },
  {
    name: "a file's ETag changes when its content does",
    async run(f) {
      const repo = await f.repository();
      const before = await repo.source.stat('gamma/config.pbtxt');
      await repo.write('gamma/config.pbtxt', text('name: "gamma"\nmax_batch_size: 8\n'));
      const after = await repo.source.stat('gamma/config.pbtxt');
      assert.ok(before && after, 'the file is there before and after');
      assert.notEqual(after.etag, before.etag, 'the ETag changed');
      assert.equal(after.size, 32);
    },
  },
  {
    name: "fetch streams a file's exact bytes",
    async run(f) {
      const { source } = await f.repository();
      const entry = (await source.list('beta', { recursive: true })).find((e) => e.path === 'beta/2/weights.bin');
      assert.ok(entry, 'beta/2/weights.bin is listed');
      const fetched = await source.fetch(entry);
      assert.deepEqual(Buffer.from(await bytesOf(fetched.body)), Buffer.from(FILES.get('beta/2/weights.bin')!));
    },
  },
  {
    name: "the server's mirror copies a model into its cache through the source, and nothing again when unchanged",
    async run(f) {
      const { source } = await f.repository();
      const cache = await mkdtemp(path.join(tmpdir(), 'tritium-conformance-cache-'));
      f.caches.push(cache);
      const mirror = new RepositoryMirror(source, cache);
      const first = await mirror.sync('alpha');
      assert.equal(first.filesDownloaded, 3);
      for (const rel of ['config.pbtxt', '1/model.bin', '1/sub/data.txt']) {
        assert.deepEqual(await readFile(path.join(first.dir, rel)), Buffer.from(FILES.get(`alpha/${rel}`)!), `alpha/${rel} in the cache`);
      }
      const second = await mirror.sync('alpha');
      assert.equal(second.filesDownloaded, 0, 'an unchanged model downloads nothing');
    },
  },
  {
    name: 'fetching a file removed after it was listed is refused with an InferError',
    async run(f) {
      const repo = await f.repository();
      const entry = await repo.source.stat('delta/1/gone.txt');
      assert.ok(entry, 'delta/1/gone.txt is there');
      await repo.remove('delta/1/gone.txt');
      assert.equal(await repo.source.stat('delta/1/gone.txt'), undefined);
      await refusal(async () => {
        const fetched = await repo.source.fetch(entry);
        await bytesOf(fetched.body);
      }, 'fetch of a removed file');
    },
  },
  {
    name: 'paths that leave the repository are refused with INVALID_ARG by list, stat and fetch',
    async run(f) {
      const { source } = await f.repository();
      for (const p of ESCAPES) {
        const entry: RepositoryEntry = { path: p, kind: 'file', size: 1, etag: 'x', mtimeMs: 0 };
        for (const [what, call] of [
          ['stat', () => source.stat(p)],
          ['list', () => source.list(p)],
          ['recursive list', () => source.list(p, { recursive: true })],
          ['fetch', () => source.fetch(entry)],
        ] as const) {
          const error = await refusal(call, `${what} '${p}'`);
          assert.equal(error.code, 'INVALID_ARG', `${what} '${p}': ${error.message}`);
        }
      }
    },
  },
];

export function repositorySourceConformanceSuite(subject: RepositorySourceConformanceSubject): ConformanceSuite {
  const fixture = new RepositoryFixture(subject);
  return {
    cases: CASES.map((c): ConformanceCase => ({ name: c.name, run: () => c.run(fixture) })),
    close: () => fixture.close(),
  };
}
