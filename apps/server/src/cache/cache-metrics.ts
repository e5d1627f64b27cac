/**
 * `tritium_response_cache_errors_total{cache,operation}` (beyond Triton): lookups and inserts the
 * response cache's store could not complete (a Redis outage). Each such lookup was served as a
 * miss and each such insert skipped; no inference failed for them.
 */
import type { CustomFamilySnapshot } from '@tritium/core/metrics';
import type { ResponseCacheStore } from '@tritium/core/cache';

export function cacheErrorFamilies(store: ResponseCacheStore): () => CustomFamilySnapshot[] {
  return () => {
    const errors = store.errors?.();
    if (!errors) return [];
    return [
      {
        name: 'tritium_response_cache_errors_total',
        description: 'Response cache lookups (served as misses) and inserts (skipped) that the cache store could not complete',
        kind: 'COUNTER',
        metrics: [
          { labels: { cache: store.name, operation: 'lookup' }, value: errors.lookup },
          { labels: { cache: store.name, operation: 'insert' }, value: errors.insert },
        ],
      },
    ];
  };
}
