import type { Tensor } from './tensor/tensor.ts';
import type { RequestTrace } from './trace/request-trace.ts';

/** A request parameter: what KServe's InferParameter oneof can carry (uint64 beyond 2^53 as bigint). */
export type ParameterValue = string | number | boolean | bigint;
export type Parameters = Readonly<Record<string, ParameterValue>>;

/**
 * One execution slot of a model (an instance's one batch in flight, or a pipeline ensemble's one
 * batch in flight), held while an execution runs on it. A request made from inside an execution
 * (BLS) lists the slots its callers hold (`InferRequest.callers`), so a scheduler can refuse at once
 * a call that could only run on slots its own callers hold, instead of waiting forever. Compared
 * by identity; server-side only (never sent to a worker).
 */
export interface CallFrame {
  /** The model whose slot this is (names the chain in errors). */
  readonly model: string;
  /** Unique per slot, for keys. */
  readonly id: number;
}

/**
 * A sequence's correlation ID (Triton's `sequence_id`): an unsigned 64-bit integer (a number, or a
 * bigint past 2^53) or a string. 0 and '' mean "no sequence".
 */
export type CorrelationId = number | bigint | string;

/** Triton's sequence extension on a request: `sequence_id`, `sequence_start`, `sequence_end`. */
export interface SequenceFlags {
  readonly id: CorrelationId;
  /** First request of the sequence (`sequence_start`). */
  readonly start?: boolean;
  /** Last request of the sequence (`sequence_end`). */
  readonly end?: boolean;
}

export interface RequestedOutput {
  readonly name: string;
  /** e.g. `classification: 3` (top-k) from Triton's classification extension. */
  readonly parameters?: Parameters;
}

/**
 * One inference request, as a transport hands it to `InferenceServer.infer`. Inputs carry the batch
 * dimension when the model's max_batch_size > 0. Plain data apart from `signal`.
 */
export interface InferRequest {
  readonly id: string;
  readonly model: string;
  /** Undefined: the version the model's policy serves (the highest ready one). */
  readonly version?: number;
  readonly inputs: readonly Tensor[];
  /** Undefined or empty: every output of the model. */
  readonly outputs?: readonly RequestedOutput[];
  /** Parameters forwarded to the model (reserved keys such as `priority`/`timeout` already lifted out). */
  readonly parameters?: Parameters;
  /** Triton's `priority`: 0 = the model's default level, 1 = highest. */
  readonly priority?: number;
  /** Triton's `timeout` in microseconds (queue timeout override); 0/undefined = none. */
  readonly timeoutUs?: number;
  /**
   * The sequence this request belongs to (transports lift `sequence_id` / `sequence_start` /
   * `sequence_end` out of the parameters). Models with `sequence_batching` require it; the sequence
   * batcher routes every request of a sequence to the same instance slot, in order.
   */
  readonly sequence?: SequenceFlags;
  /** Aborting cancels the request (CANCELLED) wherever it is: queued, in an ensemble, in flight. */
  readonly signal?: AbortSignal;
  /**
   * Set by the server on a call made from inside an execution (BLS) and on the steps it feeds: the
   * slots held by the executions waiting on this request, outermost first (see CallFrame).
   */
  readonly callers?: readonly CallFrame[];
  /**
   * Set on a batch an upstream batcher already formed and waited for (a pipeline ensemble's merged
   * request and the step requests made from it): a dynamic batcher sends it without waiting out its
   * own max_queue_delay again, merging only what is already queued beside it.
   */
  readonly preformed?: boolean;
  /** The request's trace, when the transport sampled it (see trace/request-trace.ts); never sent to workers. */
  readonly trace?: RequestTrace;
  /**
   * An ensemble step's request: where the composing model adds the compute time it spent on this
   * request (Triton's secondary statistics aggregator), so the ensemble reports the sum of its
   * composing models' compute. Never sent to workers.
   */
  readonly computeSink?: ComputeSink;
  /**
   * Pipeline batching: the ensemble requests a merged request carries. A model counts each as one
   * request (Triton counts one request per ensemble request at every step), with `priorQueueNs`
   * added to its queue time (the wait in the ensemble's batcher, charged to the first step, where a
   * Triton ensemble's requests wait). Never sent to workers.
   */
  readonly carried?: readonly CarriedRequest[];
  /**
   * Length-aware batching: the real and padded tokens of this request's rows (one length group of a
   * pipeline), added to the token statistics of the model that executes it. Never sent to workers.
   */
  readonly tokens?: TokenCount;
}

/** Tokens of a batch's rows: their own lengths summed, and rows × the longest row (what runs). */
export interface TokenCount {
  readonly real: number;
  readonly padded: number;
}

/** Compute durations (ns) of one execution, as the statistics record them. */
export interface ComputeDurations {
  readonly computeInputNs: number;
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
}

export interface ComputeSink {
  add(durations: ComputeDurations): void;
}

export interface CarriedRequest {
  readonly priorQueueNs: number;
}

export interface InferResponse {
  readonly id: string;
  readonly model: string;
  readonly version: number;
  readonly outputs: readonly Tensor[];
  readonly parameters?: Parameters;
}

/**
 * Receives the responses of a decoupled model: zero or more `response` calls, then exactly one
 * `complete` (with an error if the request failed). Also used for non-decoupled models over
 * streaming transports (one response, then complete).
 *
 * Back-pressure: `response` returns a promise when whoever reads the responses holds as much as it
 * takes queued (a streaming client reading slower than the model sends); it resolves once there is
 * room again and never rejects. A producer that can wait (a worker's response sender) sends its next
 * response after it; one that cannot ignores it. A sink that passes responses on returns what the
 * next one returned.
 */
export interface ResponseSink {
  response(response: InferResponse): void | Promise<void>;
  complete(error?: import('./errors.ts').InferError): void;
}
