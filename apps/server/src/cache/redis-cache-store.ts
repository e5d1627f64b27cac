/**
 * `--cache-config redis,...`: Triton's Redis response cache, from the optional package
 * `@tritium/cache-redis`, imported only when a server asks for it (optional/optional-package.ts).
 * The InferenceServer is built before anything async runs, so it gets this store at once and the
 * connection opens in `open()`, which the server awaits before any model loads; until then (and
 * whenever Redis fails) a lookup is a miss.
 */
import type { CachedResponse, CacheInsertOutcome, CacheStoreErrors, ResponseCacheStore } from '@tritium/core/cache';
import type { Logger } from '@tritium/core';
import { lazyImport, OPTIONAL_PACKAGES } from '../optional/optional-package.ts';

const redisModule = lazyImport(OPTIONAL_PACKAGES.redis, '--cache-config redis', () => import('@tritium/cache-redis'));

export class RedisCacheStore implements ResponseCacheStore {
  readonly name = 'redis';
  private inner: ResponseCacheStore | undefined;

  constructor(
    private readonly settings: Readonly<Record<string, string>>,
    private readonly log: Logger,
  ) {}

  /** Connects (see RedisResponseCache.open); throws `Failed to initialize RedisCache: ...` on a refusal retrying cannot cure. */
  async open(): Promise<void> {
    if (this.inner) return;
    const { RedisResponseCache, RedisSettingsError } = await redisModule();
    try {
      this.inner = await RedisResponseCache.open(this.settings, { log: this.log });
    } catch (err) {
      if (err instanceof RedisSettingsError) throw new Error(err.message);
      throw err;
    }
  }

  lookup(key: string): CachedResponse | undefined | Promise<CachedResponse | undefined> {
    return this.inner?.lookup(key);
  }

  insert(key: string, response: CachedResponse): CacheInsertOutcome | Promise<CacheInsertOutcome> {
    return this.inner ? this.inner.insert(key, response) : 'failed';
  }

  errors(): CacheStoreErrors {
    return this.inner?.errors?.() ?? { lookup: 0, insert: 0 };
  }

  async close(): Promise<void> {
    await this.inner?.close?.();
  }
}
