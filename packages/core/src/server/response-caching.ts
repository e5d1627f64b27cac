/**
 * The server's use of the response cache: which loaded versions answer from it (decided once per
 * loaded version, logged when an ensemble that enables it cannot use it), the lookup before a
 * request is scheduled and the insert after it succeeds, with Triton's statistics (a hit counts a
 * success with its lookup time and no execution; a miss adds its lookup and insert time).
 */
import type { Logger } from '../logger.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import { cacheIneligibility } from '../cache/cache-eligibility.ts';
import { responseCacheKey } from '../cache/cache-key.ts';
import type { ResponseCache } from '../cache/response-cache.ts';
import type { LoadedVersion } from './loaded-version.ts';

/** A request that may be answered from the cache: its key and when its lookup started and ended. */
export interface CacheProbe {
  readonly key: string;
  readonly lookupNs: number;
}

const nowNs = (): number => Number(process.hrtime.bigint());

export class ResponseCaching {
  private readonly decided = new WeakMap<LoadedVersion, boolean>();

  constructor(
    private readonly cache: ResponseCache,
    private readonly composing: (name: string, version?: number) => ModelConfig | undefined,
    private readonly log: Logger,
  ) {}

  /** Whether `loaded` answers from the cache (its config enables it and Triton's rules allow it). */
  enabledFor(loaded: LoadedVersion): boolean {
    let on = this.decided.get(loaded);
    if (on === undefined) {
      on = loaded.config.response_cache?.enable === true;
      if (on) {
        const why = cacheIneligibility(loaded.config, this.composing);
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
   * as Triton's UpdateSuccessCacheHit), a miss returns the probe to complete with `store`.
   */
  lookup(loaded: LoadedVersion, request: InferRequest, arrivalNs: number): { hit: InferResponse } | { miss: CacheProbe } {
    const start = nowNs();
    const key = responseCacheKey(request, loaded.version, loaded.stamp);
    const cached = this.cache.lookup(key);
    const end = nowNs();
    if (!cached) return { miss: { key, lookupNs: end - start } };
    loaded.stats.cacheHit(end - arrivalNs, start - arrivalNs, end - start);
    return {
      hit: { id: request.id, model: loaded.name, version: loaded.version, outputs: cached.outputs, ...(cached.parameters ? { parameters: cached.parameters } : {}) },
    };
  }

  /** Stores a successful response of a missed request; counts the miss unless another request stored it first. */
  store(loaded: LoadedVersion, probe: CacheProbe, response: InferResponse): void {
    const start = nowNs();
    const outcome = this.cache.insert(probe.key, { outputs: response.outputs, ...(response.parameters ? { parameters: response.parameters } : {}) });
    if (outcome === 'exists') return;
    loaded.stats.cacheMiss(probe.lookupNs + (nowNs() - start));
  }
}
