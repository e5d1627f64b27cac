/**
 * Public types of the worker host: what a backend passes to `spawnWorkerInstance`, and what the entry
 * module that runs INSIDE the worker exports.
 */
import type { MetricOp } from '../metrics/custom-metrics.ts';
import type { ExecuteOutput, ExecuteTimings, ModelInstance } from '../backend/spi.ts';
import type { Logger } from '../logger.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';

export interface WorkerRestartPolicy {
  /**
   * Crashes in a row tolerated (default 5); one more and the instance is down: executes fail
   * UNAVAILABLE at once with the last cause and `onUnavailable` is called, while restarts go on. A
   * completed execute ends the row; a crash pinned on a request re-run alone (ExecuteContext.crashRetry)
   * is counted but never takes the instance down.
   */
  readonly maxRestarts?: number;
  /** An instance that runs this long without crashing starts a new row of crashes, ms (default 60 000). */
  readonly windowMs?: number;
  /** Delay before the first restart; doubles per crash in the row (default 50 ms). */
  readonly initialBackoffMs?: number;
  /** Cap of the backoff (default 60 000 ms): a crash-looping instance is retried at least this often. */
  readonly maxBackoffMs?: number;
  /**
   * How long an execute that arrives while the instance restarts (not yet down) waits for it before
   * failing UNAVAILABLE (default: the backoffs before it would be down, capped by maxBackoffMs, plus
   * 30 000 ms for a start).
   */
  readonly waitMs?: number;
  /** False: a down instance stops restarting (one-shot runs). Default true: it retries forever. */
  readonly keepTrying?: boolean;
}

export interface WorkerResourceLimits {
  readonly maxOldGenerationSizeMb?: number;
  readonly maxYoungGenerationSizeMb?: number;
  readonly stackSizeMb?: number;
}

/**
 * Server-wide rules for every worker a backend starts (`tritium serve` flags; LoadSpec.workerPolicy
 * hands them to backends, which pass them on as `WorkerInstanceOptions.policy`).
 */
export interface WorkerPolicy {
  /**
   * `--model-log-rate`: bytes per second of one instance's output (its log calls and, with process
   * isolation, its stdout and stderr lines) that reach the server's log; lines past it are dropped
   * and counted (default 65536, see model-output.ts).
   */
  readonly logBytesPerSec?: number;
  /**
   * `--strict-sandbox`: a process-isolated instance whose sandbox lacks a guarantee of
   * PROCESS_SANDBOX_GUARANTEES on this host fails to start (UNSUPPORTED, naming each one). Default
   * false: it starts, and the server logs a warning naming them.
   */
  readonly strictSandbox?: boolean;
}

/** Options of {@link spawnWorkerInstance}. One options object per instance. */
export interface WorkerInstanceOptions<Init> {
  /** Where the instance's custom metric operations go (LoadSpec.metrics); without it they fail UNSUPPORTED. */
  readonly metrics?: { apply(op: MetricOp): number | undefined };
  /**
   * Absolute path or file URL of the module exporting `createInstance(init, ctx)`: JavaScript, or the
   * source name of one of our compiled modules (`new URL('./entry.ts', import.meta.url)`), which runs
   * as its compiled twin (see `compiledModule`).
   */
  readonly entry: string | URL;
  /** Handed to `createInstance` on every (re)start; must be structured-cloneable. */
  readonly init: Init;
  /** Model and instance names, for error messages and logs (e.g. `'m'`, `'m_0_0'`). */
  readonly model: string;
  readonly instanceName: string;
  /** The model's version, for the lines of its output in the server's log. */
  readonly version?: number;
  /** Server-wide rules (log rate, strict sandbox); defaults when absent. */
  readonly policy?: WorkerPolicy;
  /** V8 heap caps of the worker thread (thread isolation) or child process (process isolation). */
  readonly resourceLimits?: WorkerResourceLimits;
  /** An execute running longer is killed with its worker: its requests fail INTERNAL, the instance restarts. */
  readonly executeTimeoutMs?: number;
  /**
   * An execute running longer is logged (model, instance, elapsed) and counted in `executeOverruns`
   * (default 30 000 ms; 0 turns it off). It keeps running: only `executeTimeoutMs` stops it.
   */
  readonly executeWarnMs?: number;
  /** Restart backoff and give-up policy after crashes. */
  readonly restart?: WorkerRestartPolicy;
  /** How long the first start (import + createInstance) may take (default 60 000 ms). */
  readonly startTimeoutMs?: number;
  /** Aborting it during the first start ends the worker at once and rejects (a server stop abandoning the load). */
  readonly signal?: AbortSignal;
  /** BLS: lets worker code call other models (`ctx.infer`). Without it `ctx.infer` fails UNSUPPORTED. */
  readonly infer?: (request: InferRequest) => Promise<InferResponse>;
  /** BLS, decoupled form (`ctx.inferStream`). */
  readonly inferStream?: (request: InferRequest, sink: ResponseSink) => void;
  /** Receives the host's messages (restarts, crashes) and the worker's `ctx.log` lines. */
  readonly log?: Logger;
  /**
   * Called when the instance goes down after too many crashes in a row, and again with each new
   * cause while it stays down; it fails every execute UNAVAILABLE meanwhile.
   */
  readonly onUnavailable?: (reason: string) => void;
  /** Called when a down instance restarted successfully (it serves again). */
  readonly onAvailable?: () => void;
  /**
   * How often the worker asks its instance's `isReady()` (when it has one), and how long an answer
   * may take: a false, a throw or no answer in time makes the instance not ready (onUnavailable with
   * why; unhealthy, so batches go to ready instances) until an answer is true again (onAvailable).
   * Default: not asked.
   */
  readonly readiness?: ReadinessPolicy;
  /**
   * `'thread'` (default): a worker thread. `'process'`: a child process under Node's permission model
   * (read-only fs limited to `processPermissions.allowRead` + what the runtime needs, no child
   * processes, no workers, no fs writes), speaking the same protocol over IPC.
   */
  readonly isolation?: 'thread' | 'process';
  readonly processPermissions?: { readonly allowRead?: readonly string[] };
  /**
   * Process isolation only: what the sandbox around the child enforces beyond the permission model
   * (see process-sandbox.ts and its table of guarantees). The child always runs in its own session,
   * in PID/user namespaces where the host allows, as uid 65534 when the server runs as root.
   */
  readonly sandbox?: {
    /** Keep the host's network (default false: a network namespace with no interface up). */
    readonly allowNetwork?: boolean;
    /** Bound of the whole child process (RLIMIT_DATA: heap, ArrayBuffers, native memory), MiB. Default none. */
    readonly memoryLimitMb?: number;
  };
  /**
   * Environment of the worker. Threads: default a copy of process.env. Process isolation: exactly
   * this (default empty): nothing of the server's environment is inherited.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Extra Node flags for the worker / child (default none; the host never inherits the parent's execArgv). */
  readonly execArgv?: readonly string[];
  /**
   * Inputs under 64 KiB are always copied into one packed buffer per batch. Larger inputs that span
   * their whole ArrayBuffer are transferred (detached) when this is true, cloned when false (default:
   * the caller may still hold those tensors, e.g. an ensemble feeding one tensor to two steps). Large
   * views over part of a buffer are copied once into a fresh buffer, which is transferred.
   */
  readonly transferInputs?: boolean;
}

/** A ModelInstance backed by a worker, with its health. */
export interface WorkerInstance extends ModelInstance {
  /** False while restarting after a crash or once given up. */
  readonly healthy: boolean;
  /** Restarts so far (crash recoveries). */
  readonly restarts: number;
  /** Executes that ran past `executeWarnMs` so far. */
  readonly executeOverruns: number;
  /** Lines of its output dropped over the log rate so far (WorkerPolicy.logBytesPerSec). */
  readonly logLinesDropped: number;
}

/** A streaming BLS call in progress (`WorkerContext.inferStream`). */
export interface BlsStream {
  /** Cancels the call (Triton's response iterator `cancel()`): the callee's request is cancelled, the sink then completes. */
  cancel(): void;
}

/** Passed to `createInstance` inside the worker. */
export interface WorkerContext {
  readonly model: string;
  readonly instanceName: string;
  /** BLS: runs a request through the server (main thread). Rejects with InferError. */
  infer(request: Omit<InferRequest, 'signal' | 'callers'>): Promise<InferResponse>;
  /** BLS, decoupled: each streamed response to `sink.response`, then `sink.complete(error?)`. */
  inferStream(request: Omit<InferRequest, 'signal' | 'callers'>, sink: ResponseSink): BlsStream;
  /** Lines go to the host's logger. */
  readonly log: Logger;
  /** A custom metric operation, applied on the main thread (see CustomMetrics); errors are logged there. */
  metric(op: MetricOp): void;
  /** The value of one metric as the main thread aggregates it (all instances). */
  metricValue(op: MetricOp & { op: 'value' }): Promise<number>;
}

export interface WorkerExecuteContext {
  /** Aborts when the host's execute signal aborts (every request cancelled, or teardown). */
  readonly signal: AbortSignal;
}

/**
 * An execute's answer as ONE response for the whole batch: every output's dim 0 is the batch's total
 * rows (the sum of each request's dim 0), and the host splits it back by rows, each request getting
 * the outputs it asked for (all when it named none), as views, in its own response (its id, the
 * whole's model, version and parameters). The worker packs and posts 2 tensors where it would post
 * one per output per request (64 for 32 tokenizer requests); a whole whose rows do not add up fails
 * every request of the batch.
 */
export interface WholeBatchOutput {
  readonly whole: InferResponse;
  readonly timings?: ExecuteTimings;
}

/**
 * What a worker's `execute` resolves with: per-request results or one whole-batch response, and
 * `keepOutputs: true` when the entry keeps using the arrays it returned (a model may return the
 * same tensors again): then none is transferred (detached), large ones are copied by the channel
 * instead (small ones are always copied into the batch's buffer). Default false: output buffers
 * that span their whole ArrayBuffer are transferred.
 */
export type WorkerExecuteOutput = (ExecuteOutput | WholeBatchOutput) & { readonly keepOutputs?: boolean };

/** How an instance's `isReady()` is asked (see WorkerInstanceOptions.readiness). */
export interface ReadinessPolicy {
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/**
 * What `createInstance` returns inside the worker. `execute` resolves with one result per request in
 * order (an InferError in a slot fails only that request), or with one response for the whole batch
 * ({@link WholeBatchOutput}), and, optionally, the timings of that very execute; rejecting fails the
 * whole batch (INTERNAL unless it is an InferError) WITHOUT restarting the worker. Output buffers
 * that span their whole ArrayBuffer are transferred to the host and so detached here, unless the
 * output says `keepOutputs` ({@link WorkerExecuteOutput}); a decoupled sink always transfers them.
 */
export interface WorkerModelInstance {
  execute(batch: readonly InferRequest[], ctx: WorkerExecuteContext): Promise<WorkerExecuteOutput>;
  /** Decoupled: responses through `sinks`; resolves (optionally with this call's timings) when the call returns. */
  executeDecoupled?(batch: readonly InferRequest[], sinks: readonly ResponseSink[], ctx: WorkerExecuteContext): Promise<ExecuteTimings | void>;
  dispose?(): Promise<void>;
  /** Whether the instance can serve now (a model's own health: a lost connection, a stale resource); see ReadinessPolicy. */
  isReady?(): boolean | Promise<boolean>;
}

/** The type of the `createInstance` export of an entry module. */
export type CreateWorkerInstance<Init> = (init: Init, ctx: WorkerContext) => Promise<WorkerModelInstance>;
