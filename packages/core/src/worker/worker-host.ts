/**
 * The worker host: a ModelInstance whose work runs in its own worker thread (or child process).
 *
 * Failure semantics: if the worker throws (uncaught), exits, runs out of heap or overruns
 * `executeTimeoutMs`, only the requests in flight on it fail (INTERNAL, `model 'm' instance 'i'
 * crashed: <cause>`); the worker is replaced after an exponential backoff, re-running
 * `createInstance(init)`. Executes that arrive meanwhile wait for the restart (bounded by
 * `restart.waitMs`). More than `restart.maxRestarts` crashes in a row (a completed execute, or a run
 * of `restart.windowMs` without a crash, ends the row; a crash while the batcher re-runs one request
 * alone after a crash, `ExecuteContext.crashRetry`, is counted but never takes the instance down: it
 * is pinned on that request) and the instance is down: `onUnavailable(reason)` is called (again
 * with each new cause), every execute fails UNAVAILABLE at once with the last cause, and it keeps
 * restarting, the backoff doubling up to `restart.maxBackoffMs` (60 s), forever unless
 * `restart.keepTrying` is false; the first restart that works calls `onAvailable()`.
 *
 * Concurrency: core calls `execute` one batch at a time per instance, but the host tolerates
 * overlapping calls (each is tracked by id).
 *
 * Over 400 lines because this is the instance's state machine (starting, ready, restarting,
 * down, disposed), and its message handling, crashes, restarts and executes each read and change
 * that state. Its other jobs are their own modules: starting a worker (worker-launch.ts), the BLS
 * broker (bls-broker.ts), custom metrics (metric-relay.ts), the restart policy (restart-policy.ts),
 * the overrun watch (execute-overrun.ts) and what it keeps per worker (host-generation.ts).
 */
import { CallScope } from './call-scope.ts';
import { InferError } from '../errors.ts';
import { onAbort } from '../scheduler/abort-listeners.ts';
import type { ExecuteContext, ExecuteOutput, ExecuteTimings } from '../backend/spi.ts';
import { instanceFailure } from '../backend/instance-failure.ts';
import { silentLogger, type Logger } from '../logger.ts';
import type { RequestTrace } from '../trace/request-trace.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';
import type { Channel } from './channel.ts';
import { packRequests, prepareRequest, type FromWorker } from './protocol.ts';
import type { WorkerInstance, WorkerInstanceOptions } from './types.ts';
import { checkWireError, checkWireLog, checkWireReadiness, malformedResponse, MalformedMessage, readResponse, readResultMessage } from './wire-check.ts';
import { HostSinkFlow, responseBytes, SINK_WINDOW_BYTES } from './sink-flow.ts';
import type { SandboxSpec } from './process-sandbox.ts';
import { ModelOutput } from './model-output.ts';
import { endStreams, keepAliveWhileBusy, type Generation } from './host-generation.ts';
import { brokerBlsCall } from './bls-broker.ts';
import { MetricRelay } from './metric-relay.ts';
import { RestartPolicy } from './restart-policy.ts';
import { instanceSandbox, launchChannel, workerModules, type WorkerModules } from './worker-launch.ts';
import { overrunWatch, type OverrunWatchOptions } from './execute-overrun.ts';

/** `down`: crashed more than maxRestarts times in a row; still restarting (unless keepTrying is false). */
type State = 'starting' | 'ready' | 'restarting' | 'down' | 'disposed';

class WorkerHostInstance<Init> implements WorkerInstance {
  restarts = 0;
  executeOverruns = 0;
  private state: State = 'starting';
  private gen: Generation | undefined;
  private nextId = 1;
  private lastCause = '';
  private unavailableReason = '';
  /** Why the serving worker's `isReady()` says it cannot serve (see ReadinessPolicy); undefined: ready. */
  private notReady: string | undefined;
  /** The server was told this instance is not ready (onUnavailable) and not yet that it is again. */
  private reportedNotReady = false;
  private restartTimer: NodeJS.Timeout | undefined;
  /** The compiled runtime and entry, found on the first start. */
  private modules: WorkerModules | undefined;
  private sandbox: SandboxSpec | undefined;
  private waiters = new Set<{ resolve(): void; reject(e: InferError): void }>();
  private readonly log: Logger;
  private readonly label: string;
  /** What the model writes to the log (log calls, a child's stdout and stderr), bounded. */
  private readonly output: ModelOutput;
  private readonly restartPolicy: RestartPolicy;
  private readonly metricRelay: MetricRelay;
  private readonly overrunOptions: OverrunWatchOptions;

  constructor(private readonly o: WorkerInstanceOptions<Init>) {
    this.log = o.log ?? silentLogger;
    this.label = `model '${o.model}' instance '${o.instanceName}'`;
    this.output = new ModelOutput({ model: o.model, ...(o.version !== undefined ? { version: o.version } : {}), instance: o.instanceName }, this.log, o.policy?.logBytesPerSec);
    this.restartPolicy = new RestartPolicy(o.restart);
    this.metricRelay = new MetricRelay(this.label, this.log, o.metrics);
    this.overrunOptions = {
      label: this.label,
      log: this.log,
      executeWarnMs: o.executeWarnMs,
      executeTimeoutMs: o.executeTimeoutMs,
      onOverrun: () => this.executeOverruns++,
    };
  }

  get logLinesDropped(): number {
    return this.output.droppedLines;
  }

  get healthy(): boolean {
    return this.state === 'ready' && this.notReady === undefined;
  }

  /** Starts a worker; resolves when `createInstance` returned, rejects with its error or the crash cause. */
  async start(): Promise<void> {
    const modules = (this.modules ??= workerModules(this.o, this.label));
    const sandbox = this.o.isolation === 'process' ? await this.sandboxFor([...(modules.readPaths ?? []), process.execPath]) : undefined;
    // Disposed while the sandbox was prepared (a stop abandoning the load): no worker is spawned.
    if (this.state === 'disposed') throw new InferError('UNAVAILABLE', `${this.label} is unloaded`);
    return new Promise<void>((resolve, reject) => {
      const gen: Generation = {
        channel: undefined as unknown as Channel,
        pending: new Map(),
        streams: new Map(),
        blsStreams: new Map(),
        blsBytes: 0,
        ready: false,
        dead: false,
        started: { resolve, reject },
      };
      const handlers = { message: (m: FromWorker) => this.receive(gen, m), died: (cause: string) => this.crash(gen, cause) };
      gen.channel = launchChannel(this.o, modules, this.output, sandbox, handlers);
      this.gen = gen;
      gen.channel.send({
        t: 'init',
        payload: {
          entry: modules.entry.href,
          init: this.o.init,
          model: this.o.model,
          instanceName: this.o.instanceName,
          ...(this.o.readiness ? { readiness: this.o.readiness } : {}),
        },
      });
      const startTimeout = this.o.startTimeoutMs ?? 60_000;
      const timer = setTimeout(() => this.crash(gen, `worker did not start within ${startTimeout} ms`), startTimeout);
      const clear = (): void => clearTimeout(timer);
      gen.started = {
        resolve: () => {
          clear();
          resolve();
        },
        reject: (e) => {
          clear();
          reject(e);
        },
      };
    });
  }

  /**
   * The sandbox of this instance's child, decided on its first start; that start also logs, once,
   * each guarantee this host cannot give it, or, with `policy.strictSandbox`, fails naming them.
   */
  private async sandboxFor(readPaths: readonly string[]): Promise<SandboxSpec> {
    this.sandbox ??= await instanceSandbox(this.o, this.label, this.log, readPaths);
    return this.sandbox;
  }

  /**
   * Every message from a worker is untrusted (its code can send its own, see wire-check.ts): one the
   * host cannot use, or one that makes handling it throw, ends the worker as a crash would, its
   * cause in the log; it never throws into the channel's event handler, which would end the server.
   */
  private receive(gen: Generation, msg: FromWorker): void {
    try {
      this.onMessage(gen, msg);
    } catch (error) {
      const t: unknown = (msg as { t?: unknown }).t;
      const what = typeof t === 'string' ? t.slice(0, 40) : String(t);
      this.crash(gen, `worker sent a malformed '${what}' message: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private onMessage(gen: Generation, msg: FromWorker): void {
    if (gen.dead) return;
    switch (msg.t) {
      case 'ready':
        gen.ready = true;
        gen.readyAt = Date.now();
        keepAliveWhileBusy(gen);
        gen.started.resolve();
        break;
      case 'fatal':
        checkWireError(msg.error, 'fatal');
        if (gen.ready) this.crash(gen, `worker threw: ${msg.error.message}`);
        else if (this.state === 'restarting' || this.state === 'down') this.crash(gen, `createInstance failed on restart: ${msg.error.message}`);
        else {
          // First start: createInstance failed; report its error as is (its code kept).
          gen.dead = true;
          void gen.channel.kill();
          gen.started.reject(InferError.fromWire(msg.error));
        }
        break;
      case 'result': {
        const p = gen.pending.get(msg.id);
        if (!p) return;
        // Read (and check) before any state changes: a malformed result then fails this execute too.
        const output = readResultMessage(msg, p.batch, p.sinks !== undefined, this.label);
        gen.pending.delete(msg.id);
        // The worker completed an execute: it is not in a crash loop.
        this.restartPolicy.completed();
        p.cleanup();
        if (p.sinks && !msg.error && p.open && p.open.size > 0) {
          gen.streams.set(msg.id, { sinks: p.sinks, open: p.open, flow: p.flow, children: p.children, callers: p.callers, release: p.release, ...(p.traces ? { traces: p.traces } : {}) });
        } else p.release();
        keepAliveWhileBusy(gen);
        if (output instanceof InferError) p.reject(output);
        else p.resolve(output);
        break;
      }
      case 'sink': {
        const owner = gen.pending.get(msg.id) ?? gen.streams.get(msg.id);
        const sink = owner?.sinks?.[msg.index];
        if (!owner || !sink || !owner.open?.has(msg.index)) return;
        if (msg.error !== undefined) checkWireError(msg.error, `completion of request ${msg.index}`);
        let response: InferResponse | undefined;
        let failed: InferError | undefined;
        try {
          response = msg.response === undefined ? undefined : readResponse(msg.response, `response for request ${msg.index}`);
        } catch (error) {
          // A malformed streamed response ends that request's stream alone, with why.
          if (!(error instanceof MalformedMessage)) throw error;
          failed = malformedResponse(this.label, error);
        }
        if (response) this.deliver(gen, msg.id, msg.index, sink, response, owner.flow);
        if (msg.done || failed) {
          owner.open.delete(msg.index);
          if (owner.open.size === 0 && gen.streams.delete(msg.id)) {
            owner.release();
            keepAliveWhileBusy(gen);
          }
          sink.complete(failed ?? (msg.error ? InferError.fromWire(msg.error) : undefined));
        }
        break;
      }
      case 'bls':
        brokerBlsCall({ label: this.label, options: this.o }, gen, msg);
        break;
      case 'bls-cancel':
        gen.blsStreams.get(msg.call)?.abort();
        break;
      case 'metric':
        this.metricRelay.apply(gen, msg.op, msg.call);
        break;
      case 'log': {
        const { level, message, verbosity } = checkWireLog(msg.level, msg.message, msg.verbosity);
        this.output.message(level, message, verbosity);
        break;
      }
      case 'readiness': {
        const { ready, reason } = checkWireReadiness(msg.ready, msg.reason);
        if (this.gen === gen) this.onReadiness(ready ? undefined : reason);
        break;
      }
    }
  }

  /** The serving worker's `isReady()` answer changed: the server hears it as the instance's health. */
  private onReadiness(reason: string | undefined): void {
    this.notReady = reason;
    if (this.state !== 'ready') return;
    if (reason !== undefined) {
      this.reportedNotReady = true;
      this.log.warn(`${this.label} is not ready: ${reason}`);
      this.notify(() => this.o.onUnavailable?.(`${this.label} is not ready: ${reason}`));
    } else if (this.reportedNotReady) {
      this.reportedNotReady = false;
      this.log.info(`${this.label} is ready again`);
      this.notify(() => this.o.onAvailable?.());
    }
  }

  /**
   * Hands a streamed response to its sink and acknowledges it to the worker once its reader took it
   * (sink-flow.ts): a worker that sent past its window is refused as a malformed message (a crash).
   */
  private deliver(gen: Generation, id: number, index: number, sink: ResponseSink, response: InferResponse, flow: HostSinkFlow | undefined): void {
    const bytes = responseBytes(response);
    if (flow && !flow.received(index, bytes)) {
      throw new MalformedMessage(`it sent a response for request ${index} past its window of ${SINK_WINDOW_BYTES} bytes not yet taken by the client`);
    }
    const ack = (): void => {
      const n = flow?.took(index, bytes) ?? 0;
      if (n > 0 && !gen.dead) gen.channel.send({ t: 'sink-ack', id, index, bytes: n });
    };
    const wait = sink.response(response);
    if (wait) void wait.then(ack);
    else ack();
  }

  private crash(gen: Generation, cause: string): void {
    if (gen.dead) return;
    gen.dead = true;
    void gen.channel.kill();
    const error = instanceFailure(new InferError('INTERNAL', `${this.label} crashed: ${cause}`));
    let pinned = gen.pending.size > 0;
    for (const p of gen.pending.values()) {
      pinned &&= p.crashRetry;
      p.cleanup();
      p.release();
      p.reject(error);
    }
    gen.pending.clear();
    endStreams(gen, error);
    if (!gen.ready) gen.started.reject(error);
    if (this.state === 'starting' || this.state === 'disposed' || this.gen !== gen) return;
    // A restarted worker is ready until its own isReady() says otherwise.
    this.notReady = undefined;
    this.lastCause = cause;
    const { backoffMs: backoff, downAfter } = this.restartPolicy.crashed(gen.readyAt, Date.now(), pinned);
    if (downAfter) {
      this.goDown(`${this.label} crashed ${downAfter}; last cause: ${cause}`, backoff);
      return;
    }
    this.state = 'restarting';
    this.log.warn(`${this.label} crashed: ${cause}; restarting in ${backoff} ms`);
    this.scheduleRestart(backoff);
  }

  private scheduleRestart(backoff: number): void {
    this.restartTimer = setTimeout(() => this.restart(), backoff);
    this.restartTimer.unref();
  }

  private restart(): void {
    this.restartTimer = undefined;
    if (this.state !== 'restarting' && this.state !== 'down') return;
    this.start().then(
      () => {
        if (this.state !== 'restarting' && this.state !== 'down') return;
        const wasDown = this.state === 'down';
        this.restarts++;
        this.state = 'ready';
        this.log.info(`${this.label} restarted (${this.restarts} restart(s) so far)`);
        for (const w of this.waiters) w.resolve();
        this.waiters.clear();
        if (wasDown || this.reportedNotReady) this.notify(() => this.o.onAvailable?.());
        this.reportedNotReady = false;
      },
      // A failed restart was counted by crash(), which scheduled the next attempt.
      () => {},
    );
  }

  /**
   * Too many crashes in a row: executes fail UNAVAILABLE at once with the cause (nobody waits on a
   * crash loop), the server hears why, and restarts go on with a growing, capped backoff.
   */
  private goDown(reason: string, backoff: number): void {
    this.state = 'down';
    this.unavailableReason = reason;
    const error = this.unavailableError();
    for (const w of this.waiters) w.reject(error);
    this.waiters.clear();
    if (this.restartPolicy.settings.keepTrying) {
      this.log.error(`${reason}; next restart in ${backoff} ms`);
      this.scheduleRestart(backoff);
    } else this.log.error(`${reason}; giving up`);
    this.notify(() => this.o.onUnavailable?.(reason));
  }

  private notify(callback: () => void): void {
    try {
      callback();
    } catch (e) {
      this.log.error(`${this.label}: health callback failed: ${InferError.from(e).message}`);
    }
  }

  private unavailableError(): InferError {
    return new InferError('UNAVAILABLE', `${this.label} is unavailable: ${this.unavailableReason}`);
  }

  /** Resolves when the instance is ready; UNAVAILABLE after waitMs or when it gives up; CANCELLED on abort. */
  private waitReady(signal: AbortSignal): Promise<void> {
    if (this.state === 'ready') return Promise.resolve();
    if (this.state === 'down') return Promise.reject(this.unavailableError());
    if (this.state === 'disposed') return Promise.reject(new InferError('UNAVAILABLE', `${this.label} is unloaded`));
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        stopListening();
        this.waiters.delete(waiter);
      };
      const waiter = {
        resolve: () => (done(), resolve()),
        reject: (e: InferError) => (done(), reject(e)),
      };
      const timer = setTimeout(
        () =>
          waiter.reject(
            new InferError(
              'UNAVAILABLE',
              `${this.label} is restarting after a crash (${this.lastCause}) and did not recover within ${this.restartPolicy.settings.waitMs} ms`,
            ),
          ),
        this.restartPolicy.settings.waitMs,
      );
      const stopListening = onAbort(signal, () => waiter.reject(new InferError('CANCELLED', 'request cancelled while the instance was restarting')));
      this.waiters.add(waiter);
    });
  }

  execute(batch: readonly InferRequest[], signal: AbortSignal, context?: ExecuteContext): Promise<ExecuteOutput> {
    return this.run(batch, signal, undefined, context);
  }

  async executeDecoupled(
    batch: readonly InferRequest[],
    sinks: readonly ResponseSink[],
    signal: AbortSignal,
    context?: ExecuteContext,
  ): Promise<ExecuteTimings | void> {
    return (await this.run(batch, signal, sinks, context)).timings;
  }

  /**
   * Not async: when the instance is ready (the usual case) the batch goes out in this turn and the
   * caller awaits the execute's own promise. An async function returning that promise would resolve
   * its own with it two microtask turns later, and awaiting "ready" would add a turn of its own.
   */
  private run(
    batch: readonly InferRequest[],
    signal: AbortSignal,
    sinks: readonly ResponseSink[] | undefined,
    context: ExecuteContext | undefined,
  ): Promise<ExecuteOutput> {
    if (signal.aborted) return Promise.reject(new InferError('CANCELLED', 'request cancelled'));
    const gen = this.gen;
    if (this.state === 'ready' && gen && !gen.dead) return this.dispatch(gen, batch, signal, sinks, context);
    return this.runWhenReady(batch, signal, sinks, context);
  }

  /** Not ready, or the worker died between "ready" and this turn: waits for its successor (bounded by waitReady). */
  private async runWhenReady(
    batch: readonly InferRequest[],
    signal: AbortSignal,
    sinks: readonly ResponseSink[] | undefined,
    context: ExecuteContext | undefined,
  ): Promise<ExecuteOutput> {
    let gen = this.gen;
    while (this.state !== 'ready' || !gen || gen.dead) {
      await this.waitReady(signal);
      gen = this.gen;
    }
    return this.dispatch(gen, batch, signal, sinks, context);
  }

  /** Sends the batch to the worker `gen`; settles with its result, or its crash. */
  private dispatch(
    gen: Generation,
    batch: readonly InferRequest[],
    signal: AbortSignal,
    sinks: readonly ResponseSink[] | undefined,
    context: ExecuteContext | undefined,
  ): Promise<ExecuteOutput> {
    const id = this.nextId++;
    const transfer: ArrayBuffer[] = [];
    const transferList = gen.channel.canTransfer ? transfer : undefined;
    const transferWhole = this.o.transferInputs === true;
    return new Promise<ExecuteOutput>((resolve, reject) => {
      // Packed in the executor: anything it throws rejects the execute, as it did in an async run().
      const packed = packRequests(batch, transferList, transferWhole);
      const timeoutMs = this.o.executeTimeoutMs;
      const timer =
        timeoutMs && timeoutMs > 0 ? setTimeout(() => this.crash(gen, `execute timed out after ${timeoutMs} ms`), timeoutMs) : undefined;
      const warn = overrunWatch(this.overrunOptions, batch.length);
      const children = new CallScope();
      // Through core's one-listener-per-signal Set: an EventTarget add+remove costs ~1.2 µs per execute.
      const stopListening = onAbort(signal, () => {
        gen.channel.send({ t: 'abort', id });
        children.abort();
      });
      // A loop, not flatMap (a closure and an array per request: ~1 µs a batch of 32 untraced ones).
      let traces: RequestTrace[] | undefined;
      for (const r of batch) if (r.trace) (traces ??= []).push(r.trace);
      gen.pending.set(id, {
        resolve,
        reject,
        batch,
        sinks,
        children,
        callers: context?.callers,
        crashRetry: context?.crashRetry === true,
        ...(sinks ? { open: new Set(sinks.map((_, i) => i)), flow: new HostSinkFlow(sinks.length) } : {}),
        ...(traces ? { traces } : {}),
        cleanup: () => {
          if (timer) clearTimeout(timer);
          warn.done();
        },
        release: () => {
          stopListening();
          children.abort();
        },
      });
      keepAliveWhileBusy(gen);
      const decoupled = sinks !== undefined;
      gen.channel.send(
        packed
          ? { t: 'execute', id, packed, decoupled }
          : { t: 'execute', id, batch: batch.map((r) => prepareRequest(r, transferList, transferWhole)), decoupled },
        transfer,
      );
    });
  }

  async dispose(): Promise<void> {
    if (this.state === 'disposed') return;
    this.state = 'disposed';
    await this.stop();
  }

  private async stop(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const error = new InferError('UNAVAILABLE', `${this.label} is unloaded`);
    for (const w of this.waiters) w.reject(error);
    this.waiters.clear();
    const gen = this.gen;
    if (!gen || gen.dead) return;
    gen.dead = true;
    for (const p of gen.pending.values()) {
      p.cleanup();
      p.release();
      p.reject(error);
    }
    gen.pending.clear();
    endStreams(gen, error);
    if (gen.ready) {
      // Let the instance run its dispose(); kill it if it does not exit in time.
      gen.channel.keepAlive(true);
      gen.channel.send({ t: 'dispose' });
      const killTimer = setTimeout(() => void gen.channel.kill(), 2_000);
      await gen.channel.exited;
      clearTimeout(killTimer);
    } else {
      gen.started.reject(error);
      await gen.channel.kill();
    }
  }

  /** Called by spawnWorkerInstance once the first start succeeded. */
  markReady(): void {
    this.state = 'ready';
  }
}

/**
 * Starts a worker (thread, or child process with `isolation: 'process'`), runs the entry's
 * `createInstance(init, ctx)` in it and resolves with a ModelInstance that forwards executes to it.
 * Rejects with createInstance's error (its code kept, e.g. INVALID_ARG) or INTERNAL naming the crash.
 */
export async function spawnWorkerInstance<Init>(o: WorkerInstanceOptions<Init>): Promise<WorkerInstance> {
  const instance = new WorkerHostInstance(o);
  // A stop abandoning the load ends the worker now instead of waiting out createInstance (which may
  // never return) or the start timeout.
  const abandon = (): void => void instance.dispose();
  o.signal?.addEventListener('abort', abandon, { once: true });
  try {
    if (o.signal?.aborted) throw new InferError('UNAVAILABLE', `model '${o.model}' instance '${o.instanceName}' was not started: the server is stopping`);
    await instance.start();
  } catch (error) {
    await instance.dispose();
    throw error;
  } finally {
    o.signal?.removeEventListener('abort', abandon);
  }
  instance.markReady();
  return instance;
}
