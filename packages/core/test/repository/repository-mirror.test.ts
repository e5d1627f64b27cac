/**
 * The cache copy of a remote repository (RepositoryMirror) over a real source on disk: only changed
 * files are fetched, unchanged folders are not touched, files land owner-only, the cache folder is
 * refused when another user could write to it, a link planted in it is replaced (never written
 * through), and paths from a source are checked before use.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRelativePath, localRepositorySource, type RepositorySource } from '../../src/repository/index.ts';
import { RepositoryMirror } from '../../src/repository/mirror/repository-mirror.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tritium-mirror-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The local source seen as a remote one (no `localRoot`), counting fetches. */
function remoteView(dir: string): RepositorySource & { fetched: string[] } {
  const local = localRepositorySource(dir);
  const fetched: string[] = [];
  return {
    url: `file-store://${dir}`,
    list: (d, o) => local.list(d, o),
    stat: (p, o) => local.stat(p, o),
    fetch: (e, o) => {
      fetched.push(e.path);
      return local.fetch(e, o);
    },
    fetched,
  };
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

describe('RepositoryMirror', () => {
  it('copies a model, then fetches only what changed and leaves unchanged folders untouched', async () => {
    const store = path.join(tmp, 'store');
    write(path.join(store, 'm/config.pbtxt'), 'backend: "x"');
    write(path.join(store, 'm/1/model.bin'), 'one');
    write(path.join(store, 'm/2/model.bin'), 'two');
    write(path.join(store, 'm/2/sub/extra.txt'), 'extra');
    const source = remoteView(store);
    const mirror = new RepositoryMirror(source, path.join(tmp, 'cache'));
    const first = await mirror.sync('m');
    expect(first.filesDownloaded).toBe(4);
    expect(readFileSync(path.join(first.dir, '2/sub/extra.txt'), 'utf8')).toBe('extra');
    expect(lstatSync(path.join(first.dir, '1/model.bin')).mode & 0o777).toBe(0o600);
    expect(lstatSync(path.join(tmp, 'cache')).mode & 0o777).toBe(0o700);
    const v1 = lstatSync(path.join(first.dir, '1'), { bigint: true });

    expect((await mirror.sync('m')).filesDownloaded).toBe(0);
    write(path.join(store, 'm/2/model.bin'), 'TWO!');
    source.fetched.length = 0;
    const third = await mirror.sync('m');
    expect(source.fetched).toEqual(['m/2/model.bin']);
    expect(readFileSync(path.join(third.dir, '2/model.bin'), 'utf8')).toBe('TWO!');
    expect(readFileSync(path.join(third.dir, '2/sub/extra.txt'), 'utf8')).toBe('extra');
    const v1After = lstatSync(path.join(third.dir, '1'), { bigint: true });
    expect([v1After.ino, v1After.mtimeNs]).toEqual([v1.ino, v1.mtimeNs]);

    // A folder removed from the store leaves the copy; a new mirror on the same cache reuses it.
    rmSync(path.join(store, 'm/1'), { recursive: true });
    await mirror.sync('m');
    expect(() => lstatSync(path.join(third.dir, '1'))).toThrow();
    const again = remoteView(store);
    expect((await new RepositoryMirror(again, path.join(tmp, 'cache')).sync('m')).filesDownloaded).toBe(0);
  });

  it('replaces a link planted in the cache instead of writing through it', async () => {
    const store = path.join(tmp, 'store-link');
    write(path.join(store, 'k/config.pbtxt'), 'a');
    write(path.join(store, 'k/1/model.bin'), 'one');
    const cache = path.join(tmp, 'cache-link');
    const mirror = new RepositoryMirror(remoteView(store), cache);
    const { dir } = await mirror.sync('k');
    // Someone with the server's uid swaps version 1 and config.pbtxt for links to a folder/file outside.
    const outside = path.join(tmp, 'outside');
    mkdirSync(outside);
    write(path.join(outside, 'victim.txt'), 'untouched');
    rmSync(path.join(dir, '1'), { recursive: true });
    symlinkSync(outside, path.join(dir, '1'));
    rmSync(path.join(dir, 'config.pbtxt'));
    symlinkSync(path.join(outside, 'victim.txt'), path.join(dir, 'config.pbtxt'));
    write(path.join(store, 'k/config.pbtxt'), 'b');
    await mirror.sync('k');
    expect(lstatSync(path.join(dir, '1')).isSymbolicLink()).toBe(false);
    expect(readFileSync(path.join(dir, '1/model.bin'), 'utf8')).toBe('one');
    expect(lstatSync(path.join(dir, 'config.pbtxt')).isSymbolicLink()).toBe(false);
    expect(readFileSync(path.join(dir, 'config.pbtxt'), 'utf8')).toBe('b');
    expect(readFileSync(path.join(outside, 'victim.txt'), 'utf8')).toBe('untouched');
    expect(readdirSync(outside)).toEqual(['victim.txt']);
  });

  it('refuses a cache folder that others can write to, or that is a link', async () => {
    const open = path.join(tmp, 'open-cache');
    mkdirSync(open);
    chmodSync(open, 0o777);
    await expect(new RepositoryMirror(remoteView(tmp), open).sync('m')).rejects.toThrow(`refusing repository cache folder '${open}': writable by group or others`);
    const link = path.join(tmp, 'link-cache');
    symlinkSync(path.join(tmp, 'cache'), link);
    await expect(new RepositoryMirror(remoteView(tmp), link).sync('m')).rejects.toThrow(/not a folder/);
  });
});

describe('checkRelativePath', () => {
  it('accepts plain relative paths and refuses every escape', () => {
    expect(checkRelativePath('m/1/model.onnx', 'u')).toEqual(['m', '1', 'model.onnx']);
    for (const bad of ['', '/etc/passwd', 'm/../../x', 'm/./x', 'm//x', '..', 'a\\..\\b', 'nul\0byte', `${'d/'.repeat(40)}f`]) {
      expect(() => checkRelativePath(bad, 's3://b/r'), bad).toThrow(/refusing object .* in repository 's3:\/\/b\/r'/);
    }
  });
});
