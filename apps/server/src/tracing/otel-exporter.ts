/**
 * OpenTelemetry mode (`--trace-config mode=opentelemetry`), through the official SDK: a
 * BasicTracerProvider with a BatchSpanProcessor (Triton's bsp_* settings) and the OTLP/HTTP
 * protobuf exporter to `url`, resource attributes from `resource=` (service.name
 * `triton-inference-server` by default, as Triton). Spans as Triton makes them (server: tracer.cc
 * Trace::ReportToOpenTelemetry): a root `InferRequest` span (kind SERVER; the client's W3C
 * `traceparent` as its parent, when sent), the frontend timestamps as its events; per model request
 * a span named after the model with `triton.model_name`, `triton.model_version`, `triton.trace_id`,
 * `triton.trace_parent_id`, `triton.request_id` and the activities as events, its steps' and BLS
 * calls' spans below it; per execution a `compute` span. A pipeline batch's request spans link to
 * the others of their batch.
 */
import { ROOT_CONTEXT, SpanKind, trace as otelTrace, type Context, type Span, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { Logger, Tensor } from '@tritium/core';
import type { OtelConfig } from './trace-config.ts';
import type { TraceExporter, TraceNode } from './trace-tree.ts';

/** Triton's tracer name (kTritonTracer). */
export const TRITON_TRACER = 'triton-server';

/** Header or metadata lookup for the W3C trace context (`traceparent`, `tracestate`). */
export type Carrier = (name: string) => string | undefined;

const getter: TextMapGetter<Carrier> = {
  keys: () => ['traceparent', 'tracestate'],
  get: (carrier, key) => carrier(key),
};

/** Trace timestamps are ns of performance.now(): to wall-clock HrTime for OpenTelemetry. */
function hrTime(ns: number): [number, number] {
  const epochNs = BigInt(Math.round(performance.timeOrigin * 1e6)) + BigInt(Math.round(ns));
  return [Number(epochNs / 1_000_000_000n), Number(epochNs % 1_000_000_000n)];
}

export class OtelTracing {
  private readonly provider: BasicTracerProvider;
  private readonly propagator = new W3CTraceContextPropagator();
  /** Request spans of the traces in flight, by trace id (links reach across trees). */
  private readonly live = new Map<number, Span>();

  constructor(
    readonly config: OtelConfig,
    log: Logger,
  ) {
    const exporter = new OTLPTraceExporter({ url: config.url });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ ...config.resource }),
      spanProcessors: [
        new BatchSpanProcessor(exporter, {
          maxQueueSize: config.bspMaxQueueSize,
          scheduledDelayMillis: config.bspScheduleDelayMs,
          maxExportBatchSize: Math.min(config.bspMaxExportBatchSize, config.bspMaxQueueSize),
        }),
      ],
    });
    log.info(`OpenTelemetry tracing: exporting OTLP/HTTP (protobuf) to ${config.url}`);
  }

  /** The client's context when its `traceparent` is valid (Triton then traces the request whatever the rate). */
  extract(carrier: Carrier): Context | undefined {
    const ctx = this.propagator.extract(ROOT_CONTEXT, carrier, getter);
    return otelTrace.getSpanContext(ctx) ? ctx : undefined;
  }

  /** An exporter for one sampled request, its root span started now. */
  exporter(parent: Context | undefined, nowNs: number): TraceExporter {
    return new OtelTreeExporter(this.provider.getTracer(TRITON_TRACER), parent ?? ROOT_CONTEXT, nowNs, this.live);
  }

  /** Exports what is buffered (tests, shutdown). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}

type Tracer = ReturnType<BasicTracerProvider['getTracer']>;

class OtelTreeExporter implements TraceExporter {
  private readonly root: Span;
  private readonly stacks = new Map<number, Span[]>();

  constructor(
    private readonly tracer: Tracer,
    parent: Context,
    nowNs: number,
    private readonly requestSpans: Map<number, Span>,
  ) {
    this.root = tracer.startSpan('InferRequest', { kind: SpanKind.SERVER, startTime: hrTime(nowNs) }, parent);
  }

  setModel(): void {
    // The request span starts at REQUEST_START, with the model's attributes.
  }

  activity(node: TraceNode, activity: string, ns: number): void {
    const time = hrTime(ns);
    if (node.model === undefined) {
      // A frontend timestamp: an event of the root span (Triton's Trace::CaptureTimestamp).
      this.root.addEvent(activity, time);
      return;
    }
    const stack = this.stacks.get(node.id) ?? [];
    this.stacks.set(node.id, stack);
    if (activity === 'REQUEST_START') {
      const parentSpan = node.parentId === 0 ? this.root : (this.requestSpans.get(node.parentId) ?? this.root);
      const span = this.tracer.startSpan(
        node.model,
        {
          kind: SpanKind.SERVER,
          startTime: time,
          attributes: {
            'triton.model_name': node.model,
            'triton.model_version': node.version ?? -1,
            'triton.trace_id': node.id,
            'triton.trace_parent_id': node.parentId,
            ...(node.requestId ? { 'triton.request_id': node.requestId } : {}),
          },
        },
        otelTrace.setSpan(ROOT_CONTEXT, parentSpan),
      );
      this.requestSpans.set(node.id, span);
      stack.push(span);
    } else if (activity === 'COMPUTE_START') {
      const parentSpan = this.requestSpans.get(node.id) ?? this.root;
      stack.push(this.tracer.startSpan('compute', { kind: SpanKind.SERVER, startTime: time }, otelTrace.setSpan(ROOT_CONTEXT, parentSpan)));
    }
    (stack[stack.length - 1] ?? this.root).addEvent(activity, time);
    if (activity === 'COMPUTE_END' || activity === 'REQUEST_END') stack.pop()?.end(time);
  }

  tensor(): void {
    // Triton: "Tensor level tracing is not supported by the mode: opentelemetry".
  }

  link(node: TraceNode, others: readonly TraceNode[]): void {
    const span = this.requestSpans.get(node.id);
    if (!span) return;
    span.addLinks(
      others.flatMap((o) => {
        const s = this.requestSpans.get(o.id);
        return s ? [{ context: s.spanContext(), attributes: { 'tritium.link': 'pipeline_batch' } }] : [];
      }),
    );
  }

  finish(): void {
    for (const [id, stack] of this.stacks) {
      while (stack.length > 0) stack.pop()!.end();
      this.requestSpans.delete(id);
    }
    this.root.end();
  }
}

export type { Tensor };
