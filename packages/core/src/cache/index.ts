/**
 * `@tritium/core/cache`: the response cache's store SPI and core's `local` store, for packages that
 * add a store (`@tritium/cache-redis`) and for embedders that pass one to `InferenceServer`.
 */
export type { CachedResponse, CacheInsertOutcome, CacheStoreErrors, MaybePromise, ResponseCacheStore } from './response-cache-store.ts';
export { ResponseCache, MIN_RESPONSE_CACHE_BYTES } from './response-cache.ts';
export type { ResponseCacheStats } from './response-cache.ts';
export { responseCacheKey } from './cache-key.ts';
