/**
 * What the worker host keeps per worker it started (a generation: a restart starts a new one): the
 * executes in flight, the decoupled streams that outlive their execute, the BLS calls it brokers.
 */
import type { InferError } from '../errors.ts';
import type { ExecuteOutput } from '../backend/spi.ts';
import type { RequestTrace } from '../trace/request-trace.ts';
import type { CallFrame, InferRequest, ResponseSink } from '../types.ts';
import type { CallScope } from './call-scope.ts';
import type { Channel } from './channel.ts';
import type { HostSinkFlow } from './sink-flow.ts';

export interface PendingExecute {
  resolve(output: ExecuteOutput): void;
  reject(error: InferError): void;
  /** The batch: a result message must bring one result per request, or one whole-batch response split by their rows. */
  readonly batch: readonly InferRequest[];
  sinks?: readonly ResponseSink[];
  /** BLS calls made from this execute: aborted with its signal, and once it ends (orphans are not kept running). */
  readonly children: CallScope;
  /** Who this execute runs for (ExecuteContext.callers): its BLS calls carry them. */
  readonly callers: readonly CallFrame[] | undefined;
  /** ExecuteContext.crashRetry: a crash during it is pinned on its one request. */
  readonly crashRetry: boolean;
  /** Decoupled: indices of the sinks not completed yet. */
  open?: Set<number>;
  /** Decoupled: the flow control of each request's responses (sink-flow.ts). */
  flow?: HostSinkFlow;
  /** Traces of the requests this execute carries: BLS calls made meanwhile are their children. */
  traces?: readonly RequestTrace[];
  /** The execute call is over (result or crash): its timers stop. */
  cleanup(): void;
  /** Nothing of it is left running (no open stream either): its BLS calls are cancelled. */
  release(): void;
}

/**
 * A decoupled execute that returned while some of its requests are still streaming (Triton's
 * response factory outliving the execute call, as its repeat backend does): their sinks stay
 * routable until each completes, or the worker dies.
 */
export interface OpenStream {
  readonly sinks: readonly ResponseSink[];
  /** Indices of the sinks not completed yet. */
  readonly open: Set<number>;
  readonly flow?: HostSinkFlow;
  /** Its execute's BLS children and callers live on with it (see PendingExecute). */
  readonly children: CallScope;
  readonly callers: readonly CallFrame[] | undefined;
  /** Its execute's traces (see PendingExecute). */
  readonly traces?: readonly RequestTrace[];
  release(): void;
}

export interface Generation {
  channel: Channel;
  pending: Map<number, PendingExecute>;
  streams: Map<number, OpenStream>;
  /** Streaming BLS calls in progress, cancellable by the worker (`bls-cancel`). */
  blsStreams: Map<number, AbortController>;
  /** What the BLS calls in flight hold in the server (bls-broker.ts), against the instance's bound. */
  blsBytes: number;
  ready: boolean;
  /** When it became ready (Date.now()). */
  readyAt?: number;
  dead: boolean;
  /** Settles the start attempt of this generation. */
  started: { resolve(): void; reject(error: InferError): void };
}

/** Holds the event loop only while work is outstanding. */
export function keepAliveWhileBusy(gen: Generation): void {
  gen.channel.keepAlive(gen.pending.size > 0 || gen.streams.size > 0);
}

/** Ends the streams still open on a generation that is going away, with `error`. */
export function endStreams(gen: Generation, error: InferError): void {
  const streams = [...gen.streams.values()];
  gen.streams.clear();
  for (const s of streams) {
    for (const i of s.open) s.sinks[i]?.complete(error);
    s.open.clear();
    s.release();
  }
}
