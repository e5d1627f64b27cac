/**
 * `@tritium/core/cache`: the response cache's store SPI, for packages that add a store
 * (`@tritium/cache-redis`) and for embedders that pass one to `InferenceServer` (`responseCache`).
 * Core's own `local` store is internal: `responseCacheBytes` sizes it.
 */
export type { CachedResponse, CacheInsertOutcome, CacheStoreErrors, MaybePromise, ResponseCacheStore } from './response-cache-store.ts';
