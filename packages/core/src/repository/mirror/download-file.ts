import { open, unlink } from 'node:fs/promises';
import { InferError } from '../../errors.ts';
import type { RepositoryEntry, RepositorySource } from '../source/repository-source.ts';

export interface DownloadOptions {
  /** Gives up when no byte arrives for this long (a stalled connection never hangs a poll). */
  readonly idleTimeoutMs: number;
}

/** ETags compare without quotes and the weak prefix (stores differ in how they print them). */
function sameEtag(a: string, b: string): boolean {
  const norm = (s: string): string => s.replace(/^W\//, '').replace(/"/g, '');
  return norm(a) === norm(b);
}

/**
 * Streams one listed file into `destination`, a new file created owner-only (it must not exist:
 * nothing already there is overwritten or followed). The bytes are written as they arrive, never
 * held whole. Refuses, and deletes the partial file, when the store sends another ETag than the
 * listing gave (the object changed meanwhile), more or fewer bytes than listed, or nothing for
 * `idleTimeoutMs`. `url` names the object in messages.
 */
export async function downloadFile(
  source: RepositorySource,
  entry: RepositoryEntry,
  destination: string,
  options: DownloadOptions,
): Promise<void> {
  const url = `${source.url.replace(/\/+$/, '')}/${entry.path}`;
  const fail = (why: string): InferError => new InferError('INTERNAL', `failed to download '${url}': ${why}`);
  const controller = new AbortController();
  let idle: ReturnType<typeof setTimeout> | undefined;
  let body: AsyncIterable<Uint8Array> | undefined;
  const arm = (): void => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      const reason = new Error(`no data for ${options.idleTimeoutMs} ms`);
      controller.abort(reason);
      // A stalled stream may not watch the signal: destroying it ends the pending read.
      (body as { destroy?: (e: Error) => void } | undefined)?.destroy?.(reason);
    }, options.idleTimeoutMs);
  };
  const file = await open(destination, 'wx', 0o600);
  let written = 0;
  try {
    arm();
    const fetched = await source.fetch(entry, { signal: controller.signal });
    if (fetched.etag !== undefined && entry.etag !== '' && !sameEtag(fetched.etag, entry.etag)) {
      throw fail('the object changed while it was being read (ETag differs from the listing); the next poll retries');
    }
    body = fetched.body;
    for await (const chunk of body) {
      if (controller.signal.aborted) break;
      arm();
      written += chunk.byteLength;
      if (written > entry.size) throw fail(`more bytes than the ${entry.size} listed`);
      await file.write(chunk);
    }
    if (controller.signal.aborted) throw controller.signal.reason as Error;
    if (written !== entry.size) throw fail(`connection ended after ${written} of ${entry.size} bytes`);
    await file.sync();
  } catch (err) {
    await file.close().catch(() => undefined);
    await unlink(destination).catch(() => undefined);
    if (InferError.is(err)) throw err;
    const reason = controller.signal.aborted ? (controller.signal.reason as Error).message : (err as Error).message;
    throw fail(reason);
  } finally {
    clearTimeout(idle);
  }
  await file.close();
}
