/**
 * The numbers `/metrics` reports per model version (ModelMetricsSnapshot): Triton's counters and
 * durations, the instances' health, restarts and overruns, cache hits where the model caches.
 */
import type { ModelMetricsSnapshot } from './server-api.ts';
import type { LoadedVersion } from './loaded-version.ts';
import type { ModelRecord } from './model-record.ts';

/** Every serving version of `records` (down ones too: their instances' health is what an operator looks for). */
export function modelMetricsSnapshot(records: Iterable<ModelRecord>, cacheEnabledFor: (live: LoadedVersion) => boolean): ModelMetricsSnapshot[] {
  const out: ModelMetricsSnapshot[] = [];
  for (const record of records) {
    // Down versions too: their instances' health and restarts are what an operator looks for.
    for (const ver of record.servingVersions()) {
      const live = record.slots.get(ver)!.live!;
      const s = live.stats.snapshot();
      const us = (d: { ns: number }): number => Math.round(d.ns / 1000);
      const tokens = live.stats.tokenStats();
      out.push({
        model: record.name,
        version: String(ver),
        ...(record.namespace ? { namespace: record.namespace } : {}),
        metricTags: live.config.metric_tags ?? {},
        requestSuccess: s.inference_stats.success.count,
        requestFailure: live.stats.failureCounts(),
        inferenceCount: s.inference_count,
        executionCount: s.execution_count,
        pendingRequests: live.stats.pendingRequests,
        requestDurationUs: us(s.inference_stats.success) + us(s.inference_stats.fail),
        queueDurationUs: us(s.inference_stats.queue),
        computeInputDurationUs: us(s.inference_stats.compute_input),
        computeInferDurationUs: us(s.inference_stats.compute_infer),
        computeOutputDurationUs: us(s.inference_stats.compute_output),
        loadDurationSecs: live.stats.loadDurationSecs,
        crashRetries: live.stats.crashRetries,
        poisonRequests: live.stats.poisonRequests,
        ...(tokens ? { tokens } : {}),
        latency: live.stats.latency(),
        ...(cacheEnabledFor(live)
          ? {
              cache: {
                hits: s.inference_stats.cache_hit.count,
                hitDurationUs: us(s.inference_stats.cache_hit),
                misses: s.inference_stats.cache_miss.count,
                missDurationUs: us(s.inference_stats.cache_miss),
              },
            }
          : {}),
        instances: live.instances.map(({ spec, instance }) => ({
          name: spec.name,
          healthy: instance.healthy ?? true,
          restarts: (instance as { readonly restarts?: number }).restarts ?? 0,
          executeOverruns: (instance as { readonly executeOverruns?: number }).executeOverruns ?? 0,
          logLinesDropped: (instance as { readonly logLinesDropped?: number }).logLinesDropped ?? 0,
        })),
      });
    }
  }
  return out;
}
