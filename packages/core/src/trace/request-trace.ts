/**
 * The tracer SPI: the timestamps Triton records for a request (its TRITONSERVER_InferenceTraceActivity
 * values) reported to a trace the transport attached to the request. Core knows no trace format and
 * no exporter: the server binds implementations (Triton's JSON trace file, OpenTelemetry). A request
 * without a trace costs one property check at each point below, nothing more.
 *
 * Where core reports: REQUEST_START / REQUEST_END around `InferenceServer.infer` (the version as
 * routed), QUEUE_START when a scheduler accepts the request, COMPUTE_START / COMPUTE_INPUT_END /
 * COMPUTE_OUTPUT_START / COMPUTE_END from the execution that carried it (derived from the same
 * durations the statistics record, so a trace and the statistics agree). Ensemble steps and BLS
 * calls run under `spawnChild()` traces (Triton's parent_id).
 */
import type { Tensor } from '../tensor/tensor.ts';

/** Triton's activity names (tritonserver.h TRITONSERVER_InferenceTraceActivity), as its trace file writes them. */
export type TraceActivity =
  | 'REQUEST_START'
  | 'QUEUE_START'
  | 'COMPUTE_START'
  | 'COMPUTE_INPUT_END'
  | 'COMPUTE_OUTPUT_START'
  | 'COMPUTE_END'
  | 'REQUEST_END';

/** Tensor activities of the TENSORS trace level. */
export type TraceTensorActivity = 'TENSOR_QUEUE_INPUT' | 'TENSOR_BACKEND_OUTPUT';

export interface RequestTrace {
  /** The model and version the request was routed to, and its id; set once, before REQUEST_START. */
  setModel(model: string, version: number, requestId: string): void;
  /** Records `activity` at `ns` (see {@link traceNowNs}). */
  report(activity: TraceActivity, ns: number): void;
  /** True when the trace wants tensors (TENSORS level): only then does core call `reportTensor`. */
  readonly tensors: boolean;
  reportTensor(activity: TraceTensorActivity, tensor: Tensor): void;
  /** A trace for a request made on behalf of this one (an ensemble step, a BLS call): its parent is this trace. */
  spawnChild(): RequestTrace;
  /**
   * Pipeline batching: this request ran in one batch with the requests of `batch` (all of them,
   * itself included). Exporters may link them; called once, before the batch's steps start.
   */
  linkBatch(batch: readonly RequestTrace[]): void;
  /** Core reports nothing more for this trace (called after REQUEST_END, or when the request never started). */
  release(): void;
}

/**
 * Now, in nanoseconds of the clock every trace timestamp uses: the scheduler's clock (µs since the
 * process started, `performance.now()`) times 1000. Monotonic, like Triton's steady clock.
 */
export function traceNowNs(): number {
  return Math.round(performance.now() * 1000) * 1000;
}

/**
 * One trace standing for several (a pipeline batch's merged request, a BLS call made while a batch of
 * traced requests executes): every report goes to each of them, and a child is the composite of
 * their children, so each carried request gets the whole story under its own trace.
 */
export function compositeTrace(traces: readonly RequestTrace[]): RequestTrace | undefined {
  if (traces.length === 0) return undefined;
  if (traces.length === 1) return traces[0];
  return {
    setModel: (model, version, id) => traces.forEach((t) => t.setModel(model, version, id)),
    report: (activity, ns) => traces.forEach((t) => t.report(activity, ns)),
    tensors: traces.some((t) => t.tensors),
    reportTensor: (activity, tensor) => traces.forEach((t) => t.tensors && t.reportTensor(activity, tensor)),
    spawnChild: () => compositeTrace(traces.map((t) => t.spawnChild()))!,
    linkBatch: (batch) => traces.forEach((t) => t.linkBatch(batch)),
    release: () => traces.forEach((t) => t.release()),
  };
}

/**
 * The compute activities of one execution: from its start, the durations the statistics record
 * (input, infer, output), so the trace and the statistics agree to the nanosecond. Time the execute
 * spent crossing to and from a worker beyond those durations shows after COMPUTE_END.
 */
export function reportCompute(
  trace: RequestTrace,
  startNs: number,
  t: { readonly computeInputNs: number; readonly computeInferNs: number; readonly computeOutputNs: number },
): void {
  const inputEnd = startNs + Math.max(0, Math.round(t.computeInputNs));
  const outputStart = inputEnd + Math.max(0, Math.round(t.computeInferNs));
  trace.report('COMPUTE_START', startNs);
  trace.report('COMPUTE_INPUT_END', inputEnd);
  trace.report('COMPUTE_OUTPUT_START', outputStart);
  trace.report('COMPUTE_END', outputStart + Math.max(0, Math.round(t.computeOutputNs)));
}
