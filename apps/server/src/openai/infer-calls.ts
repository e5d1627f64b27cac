/**
 * The inference calls the OpenAI routes make for one HTTP request: core's own, with what the HTTP
 * transport adds to every inference request it makes: headers matching
 * `--http-header-forward-pattern` as request parameters, and the trace `--trace-config` samples
 * (the client's W3C `traceparent` included), ended when the request is answered.
 */
import type { IncomingMessage } from 'node:http';
import type { InferRequest, InferResponse, ResponseSink } from '@tritium/core';
import type { TransportContext } from '../protocol/context.ts';
import { forwardHeaders } from '../protocol/header-forward.ts';
import type { SampledTrace } from '../tracing/trace-manager.ts';

export interface InferCalls {
  infer(request: InferRequest): Promise<InferResponse>;
  inferStream(request: InferRequest, sink: ResponseSink): void;
}

export function inferCalls(ctx: TransportContext, req: IncomingMessage): InferCalls {
  const headerOf = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const prepare = (request: InferRequest): { request: InferRequest; sampled?: SampledTrace } => {
    const forwarded = forwardHeaders(request, ctx.headerForward?.http, () => Object.entries(req.headers));
    const sampled = ctx.tracing.sample(request.model, headerOf);
    return sampled ? { request: { ...forwarded, trace: sampled.trace }, sampled } : { request: forwarded };
  };
  return {
    infer(request) {
      const { request: traced, sampled } = prepare(request);
      const answer = ctx.api.infer(traced);
      return sampled ? answer.finally(() => sampled.done()) : answer;
    },
    inferStream(request, sink) {
      const { request: traced, sampled } = prepare(request);
      if (!sampled) return ctx.api.inferStream(traced, sink);
      ctx.api.inferStream(traced, {
        response: (r) => sink.response(r),
        complete: (error) => {
          sampled.done();
          sink.complete(error);
        },
      });
    },
  };
}
