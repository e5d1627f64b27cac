/**
 * The one seam between the author API and the worker that runs the model: BLS calls and log lines
 * go through the link the instance runtime installs. Kept on `globalThis` under a registered symbol so
 * a second copy of this module (e.g. imported through another path) still finds it. Holds no server
 * objects: only functions that post plain data to the host.
 */
import type { InferRequest, InferResponse, ResponseSink } from '@tritium/core';
import type { MetricOp } from '@tritium/core/metrics';

export type WireInferRequest = Omit<InferRequest, 'signal' | 'callers'>;

export interface RuntimeLink {
  /** The calling model's name (for self-call detection and messages). */
  readonly modelName: string;
  /** BLS: runs a request through the server. Rejects with an InferError. */
  infer(request: WireInferRequest): Promise<InferResponse>;
  /** BLS, decoupled; the handle cancels the call. */
  inferStream?(request: WireInferRequest, sink: ResponseSink): { cancel(): void };
  log(level: 'error' | 'warn' | 'info' | 'verbose', message: string): void;
  /** Custom metrics (MetricFamily): an operation to the server, and a value read from it. */
  metric?(op: MetricOp): void;
  metricValue?(op: MetricOp & { op: 'value' }): Promise<number>;
}

const KEY = Symbol.for('@tritium/backend-python-like/runtime-link');

export function setRuntimeLink(link: RuntimeLink | undefined): void {
  (globalThis as Record<symbol, unknown>)[KEY] = link;
}

export function runtimeLink(): RuntimeLink | undefined {
  return (globalThis as Record<symbol, unknown>)[KEY] as RuntimeLink | undefined;
}
