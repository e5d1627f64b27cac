/**
 * The response cache's store SPI (Triton's TRITONCACHE API in TypeScript): where successful
 * responses are kept, under the key `responseCacheKey` computes. Core's `local` store
 * (response-cache.ts) answers synchronously; a networked store (Redis, `@tritium/cache-redis`)
 * answers with promises. Either way a store never fails a request: a lookup it cannot answer is a
 * miss (it returns undefined), an insert it cannot make is 'failed', and the store itself logs and
 * counts why (`errors()`).
 */
import type { Tensor } from '../tensor/tensor.ts';
import type { Parameters } from '../types.ts';

/** What a cached response keeps: its outputs and parameters (id, model and version come from the request). */
export interface CachedResponse {
  readonly outputs: readonly Tensor[];
  readonly parameters?: Parameters;
}

/**
 * 'inserted'; 'exists' when another request already stored this key (Triton's ALREADY_EXISTS: not
 * a miss of its own); 'too-large' when the response exceeds what the store keeps per entry;
 * 'failed' when the store could not take it (an outage): counted as a miss, the response is served.
 */
export type CacheInsertOutcome = 'inserted' | 'exists' | 'too-large' | 'failed';

export type MaybePromise<T> = T | Promise<T>;

/** Operations a store could not complete, counted since it started (`tritium_response_cache_errors_total`). */
export interface CacheStoreErrors {
  readonly lookup: number;
  readonly insert: number;
}

export interface ResponseCacheStore {
  /** Triton's cache name (`--cache-config <name>,...`): `local`, `redis`. */
  readonly name: string;
  /** A copy of the response stored under `key`, or undefined (not there, or the store could not answer in time). */
  lookup(key: string): MaybePromise<CachedResponse | undefined>;
  /** Stores a copy of `response` under `key`; never rejects. */
  insert(key: string, response: CachedResponse): MaybePromise<CacheInsertOutcome>;
  /** Operations that failed (a networked store's outages); absent for stores that cannot fail. */
  errors?(): CacheStoreErrors;
  /** Releases connections; the server's owner calls it after the server stopped. */
  close?(): Promise<void>;
}
