/** What every transport shares: the server API, limits, shared-memory regions, settings, the log. */
import type { InferenceServerApi } from '@tritium/core';
import type { TransportLimits } from './limits.ts';
import type { StreamLimits } from './stream-queue.ts';
import type { SharedMemoryRegistry } from './shared-memory.ts';
import type { TraceManager } from '../tracing/trace-manager.ts';
import type { TritonLog } from '../logging/triton-log.ts';

export interface TransportContext {
  readonly api: InferenceServerApi;
  readonly limits: TransportLimits;
  /** `--stream-max-queued-size`, `--stream-stall-timeout-secs`: what a streaming client may leave unread. */
  readonly streams: StreamLimits;
  readonly shm: SharedMemoryRegistry;
  /** Trace settings and sampling (`--trace-config`, the trace extension). */
  readonly tracing: TraceManager;
  readonly log: TritonLog;
  /** Whether the load API may carry model files (`file:<version>/<name>` parameters). */
  readonly allowModelFileLoad: boolean;
  /** `--http-header-forward-pattern` / `--grpc-header-forward-pattern` (header-forward.ts). */
  readonly headerForward?: { readonly http?: RegExp; readonly grpc?: RegExp };
  /** `--id`: the name server metadata gives (default: core's, `triton`). */
  readonly serverId?: string;
}
