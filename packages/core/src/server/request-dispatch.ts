/**
 * How `InferenceServer` answers a routed request, as a promise (`infer`) or into a stream sink
 * (`inferStream`): the trace's REQUEST_START/REQUEST_END, the response cache's lookup and store,
 * the request's timeout, and the count of client requests a stop waits for. Ensemble steps and BLS
 * calls come through here too (`client` false: served during a stop, not counted).
 */
import { InferError } from '../errors.ts';
import type { Clock } from '../scheduler/scheduler.ts';
import { traceNowNs, type RequestTrace } from '../trace/request-trace.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';
import type { LoadedVersion } from './loaded-version.ts';
import { answerInTime, streamInTime } from './request-guard.ts';
import type { CacheLookup, ResponseCaching } from './response-caching.ts';

export interface RequestDispatchDeps {
  /** The response cache, when the server has one. */
  readonly caching: ResponseCaching | undefined;
  readonly clock: Clock;
  /** The version that serves `request`, its request checked; throws the lookup's error (a client's too once stopping). */
  route(request: InferRequest, client: boolean, namespace: string | undefined): LoadedVersion;
  /** The version serving `name` now, if any. */
  tryRoute(name: string, version: number | undefined, namespace: string | undefined): LoadedVersion | undefined;
  /** A client request was accepted; `clientSettled` once it is answered. */
  clientAccepted(): void;
  clientSettled(): void;
}

export class RequestDispatch {
  constructor(private readonly deps: RequestDispatchDeps) {}

  /**
   * `client`: a transport's request (refused once stopping, counted until answered); else a step or
   * BLS call. `namespace`: an ensemble step's, whose model resolves there first (namespacing).
   */
  infer(request: InferRequest, client: boolean, namespace?: string): Promise<InferResponse> {
    const trace = request.trace;
    const arrivalNs = this.deps.caching ? Number(process.hrtime.bigint()) : 0;
    let answer: Promise<InferResponse>;
    try {
      const loaded = this.deps.route(request, client, namespace);
      if (trace) startTrace(trace, loaded, request);
      const probe = this.deps.caching?.enabledFor(loaded) ? this.deps.caching.lookup(loaded, request, arrivalNs) : undefined;
      if (probe instanceof Promise) {
        answer = probe.then((p) => {
          const now = this.afterLookup(request, loaded);
          return this.answerLookup(now, request, 'hit' in p || now === loaded ? p : undefined);
        });
      } else answer = this.answerLookup(loaded, request, probe);
    } catch (err) {
      trace?.release();
      return Promise.reject(InferError.from(err));
    }
    if (trace) {
      answer = answer
        .then((response) => {
          if (trace.tensors) for (const t of response.outputs) trace.reportTensor('TENSOR_BACKEND_OUTPUT', t);
          return response;
        })
        .finally(() => endTrace(trace));
    }
    if (!client) return answer;
    this.deps.clientAccepted();
    return answer.finally(() => this.deps.clientSettled());
  }

  /** A hit, or the request scheduled on `loaded` (its response stored when the lookup missed). */
  private answerLookup(loaded: LoadedVersion, request: InferRequest, probe: CacheLookup | undefined): Promise<InferResponse> {
    if (probe && 'hit' in probe) return Promise.resolve(probe.hit);
    const answer = answerInTime(request, this.deps.clock, (r) => loaded.scheduler.enqueue(r));
    if (!probe) return answer;
    const caching = this.deps.caching!;
    return answer.then((response) => {
      caching.store(loaded, probe.miss, response);
      return response;
    });
  }

  /**
   * The version to schedule on once an asynchronous lookup missed: the one routed before, unless a
   * reload or unload replaced it meanwhile (then the one serving now; the request was accepted, so
   * a stop in between does not refuse it). A replacement's cache key differs, so its response is
   * stored only when it is the same version.
   */
  private afterLookup(request: InferRequest, routed: LoadedVersion): LoadedVersion {
    const now = this.deps.tryRoute(request.model, request.version, routed.namespace);
    return now ?? routed;
  }

  inferStream(request: InferRequest, sink: ResponseSink, client: boolean, namespace?: string): void {
    const arrivalNs = this.deps.caching ? Number(process.hrtime.bigint()) : 0;
    let loaded: LoadedVersion;
    try {
      loaded = this.deps.route(request, client, namespace);
    } catch (err) {
      request.trace?.release();
      sink.complete(InferError.from(err));
      return;
    }
    const trace = request.trace;
    if (trace) {
      startTrace(trace, loaded, request);
      const inner = sink;
      sink = {
        response: (r) => inner.response(r),
        complete: (error) => {
          endTrace(trace);
          inner.complete(error);
        },
      };
    }
    if (client) {
      this.deps.clientAccepted();
      const outer = sink;
      sink = {
        response: (response) => outer.response(response),
        complete: (error) => {
          this.deps.clientSettled();
          outer.complete(error);
        },
      };
    }
    const probe = this.deps.caching?.enabledFor(loaded) ? this.deps.caching.lookup(loaded, request, arrivalNs) : undefined;
    if (probe instanceof Promise) {
      const out = sink;
      void probe.then((p) => {
        const now = this.afterLookup(request, loaded);
        this.streamLookup(now, request, out, 'hit' in p || now === loaded ? p : undefined);
      });
    } else this.streamLookup(loaded, request, sink, probe);
  }

  /** `answerLookup` for a stream: a hit answers with one response, a miss is scheduled and stored. */
  private streamLookup(loaded: LoadedVersion, request: InferRequest, sink: ResponseSink, probe: CacheLookup | undefined): void {
    if (probe && 'hit' in probe) {
      sink.response(probe.hit);
      sink.complete();
      return;
    }
    if (probe) {
      // A cacheable model is never decoupled: its one response is stored once the request completes.
      const caching = this.deps.caching!;
      const inner = sink;
      let only: InferResponse | undefined;
      sink = {
        response: (response) => {
          only = response;
          return inner.response(response);
        },
        complete: (error) => {
          if (!error && only) caching.store(loaded, probe.miss, only);
          inner.complete(error);
        },
      };
    }
    streamInTime(request, sink, this.deps.clock, (r, s) => {
      if (loaded.scheduler.enqueueStream) {
        loaded.scheduler.enqueueStream(r, s);
        return;
      }
      loaded.scheduler.enqueue(r).then(
        (response) => {
          s.response(response);
          s.complete();
        },
        (err: unknown) => s.complete(InferError.from(err)),
      );
    });
  }
}

/** REQUEST_START of a routed request (Triton's InferenceServer::InferAsync): the version it reached, its id. */
function startTrace(trace: RequestTrace, loaded: LoadedVersion, request: InferRequest): void {
  trace.setModel(loaded.name, loaded.version, request.id);
  trace.report('REQUEST_START', traceNowNs());
  if (trace.tensors) for (const t of request.inputs) trace.reportTensor('TENSOR_QUEUE_INPUT', t);
}

function endTrace(trace: RequestTrace): void {
  trace.report('REQUEST_END', traceNowNs());
  trace.release();
}
