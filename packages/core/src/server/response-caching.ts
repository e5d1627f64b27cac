/**
 * The server's use of the response cache: which loaded versions answer from it (decided once per
 * loaded version, logged when an ensemble that enables it cannot use it), the lookup before a
 * request is scheduled and the insert after it succeeds, with Triton's statistics (a hit counts a
 * success with its lookup time and no execution; a miss adds its lookup and insert time).
 *
 * The store may answer synchronously (`local`) or with a promise (Redis): a synchronous store's
 * lookup stays synchronous, so routing and enqueue remain one step for it. A store never fails a
 * request: a lookup it cannot answer is a miss, an insert it cannot make still counts the miss.
 */
import type { Logger } from '../logger.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import { cacheIneligibility } from '../cache/cache-eligibility.ts';
import { responseCacheKey } from '../cache/cache-key.ts';
import type { CachedResponse, ResponseCacheStore } from '../cache/response-cache-store.ts';
import type { LoadedVersion } from './loaded-version.ts';

/** A request that may be answered from the cache: its key and how long its lookup took. */
export interface CacheProbe {
  readonly key: string;
  readonly lookupNs: number;
}

export type CacheLookup = { hit: InferResponse } | { miss: CacheProbe };

const nowNs = (): number => Number(process.hrtime.bigint());

export class ResponseCaching {
  private readonly decided = new WeakMap<LoadedVersion, boolean>();

  constructor(
    readonly cache: ResponseCacheStore,
    private readonly composing: (name: string, version: number | undefined, namespace: string) => ModelConfig | undefined,
    private readonly log: Logger,
  ) {}

  /** Whether `loaded` answers from the cache (its config enables it and Triton's rules allow it). */
  enabledFor(loaded: LoadedVersion): boolean {
    let on = this.decided.get(loaded);
    if (on === undefined) {
      on = loaded.config.response_cache?.enable === true;
      if (on) {
        const why = cacheIneligibility(loaded.config, (name, version) => this.composing(name, version, loaded.namespace));
        if (why) {
          this.log.warn(`model '${loaded.name}' version ${loaded.version}: response cache not used: ${why}`);
          on = false;
        }
      }
      this.decided.set(loaded, on);
    }
    return on;
  }

  /**
   * Looks `request` up: a hit is answered here (the response, with the model's statistics updated
   * as Triton's UpdateSuccessCacheHit), a miss returns the probe to complete with `store`. Returns a
   * promise only when the store answers with one.
   */
  lookup(loaded: LoadedVersion, request: InferRequest, arrivalNs: number): CacheLookup | Promise<CacheLookup> {
    const start = nowNs();
    const key = responseCacheKey(request, loaded.version, loaded.stamp, loaded.namespace);
    const cached = this.cache.lookup(key);
    if (cached instanceof Promise) return cached.then((c) => this.answer(loaded, request, key, c, arrivalNs, start));
    return this.answer(loaded, request, key, cached, arrivalNs, start);
  }

  private answer(loaded: LoadedVersion, request: InferRequest, key: string, cached: CachedResponse | undefined, arrivalNs: number, start: number): CacheLookup {
    const end = nowNs();
    if (!cached) return { miss: { key, lookupNs: end - start } };
    loaded.stats.cacheHit(end - arrivalNs, start - arrivalNs, end - start);
    return {
      hit: { id: request.id, model: loaded.name, version: loaded.version, outputs: cached.outputs, ...(cached.parameters ? { parameters: cached.parameters } : {}) },
    };
  }

  /**
   * Stores a successful response of a missed request; counts the miss unless another request stored
   * it first. The response is served at once: a store that answers later counts the miss then.
   */
  store(loaded: LoadedVersion, probe: CacheProbe, response: InferResponse): void {
    const start = nowNs();
    const outcome = this.cache.insert(probe.key, { outputs: response.outputs, ...(response.parameters ? { parameters: response.parameters } : {}) });
    const count = (o: string): void => {
      if (o !== 'exists') loaded.stats.cacheMiss(probe.lookupNs + (nowNs() - start));
    };
    if (outcome instanceof Promise) void outcome.then(count, () => count('failed'));
    else count(outcome);
  }
}
