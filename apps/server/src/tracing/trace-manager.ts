/**
 * The server's tracer (Triton's TraceManager): the settings (global and per model), sampling at
 * request arrival, and where finished traces go (Triton's JSON trace file, or OpenTelemetry).
 * Transports call `sample(model, carrier)` for each inference request; with tracing off for that
 * model it returns undefined after one map lookup, and core records nothing.
 *
 * @example
 * const tracing = new TraceManager(parseTraceFlags({ config: ['level=TIMESTAMPS', 'rate=1', 'triton,file=/tmp/trace.json'] }), log);
 * const sampled = tracing.sample('simple', (h) => headers[h]);
 * await api.infer({ ...request, ...(sampled ? { trace: sampled.trace } : {}) });
 * sampled?.done();
 * await tracing.shutdown(); // closes /tmp/trace.json's JSON array
 */
import { type Logger } from '@tritium/core';
import { traceNowNs, type RequestTrace } from '@tritium/core/trace';
import type { TraceConfig } from './trace-config.ts';
import { TraceSettingsStore, type TraceSetting } from './trace-settings.ts';
import { TraceBuffer, TritonTraceFile } from './triton-trace-file.ts';
import { TritonJsonExporter } from './triton-json-exporter.ts';
import { TraceTree } from './trace-tree.ts';
import { OtelTracing, type Carrier } from './otel-exporter.ts';

/** What a transport holds for a sampled request. */
export interface SampledTrace {
  /** Goes on the InferRequest. */
  readonly trace: RequestTrace;
  /** A frontend timestamp (HTTP_RECV_START, HTTP_SEND_END, GRPC_WAITREAD_END, ...), ns of `traceNowNs()`. */
  capture(name: string, ns: number): void;
  /** The response was sent (or the request failed in the transport): the trace may be written. */
  done(): void;
}

export class TraceManager {
  readonly settings: TraceSettingsStore;
  private readonly otel: OtelTracing | undefined;
  private readonly files = new Map<string, TritonTraceFile>();
  private readonly buffers = new Map<TraceSetting, TraceBuffer>();

  constructor(
    config: TraceConfig,
    private readonly log: Logger,
  ) {
    this.settings = new TraceSettingsStore(config);
    this.settings.onRetire = (s) => this.retire(s);
    this.otel = config.mode === 'opentelemetry' ? new OtelTracing(config.otel, log) : undefined;
  }

  /**
   * Decides whether this request is traced (Triton's GetTraceStartOptions + SampleTrace): the
   * model's setting, its rate and count; in OpenTelemetry mode a valid `traceparent` in `carrier`
   * is always traced and becomes the parent of the server's spans.
   */
  sample(model: string, carrier?: Carrier): SampledTrace | undefined {
    const setting = this.settings.settingFor(model);
    const level = setting.values.level;
    if (!level.timestamps && !level.tensors) return undefined;
    const parent = this.otel && carrier ? this.otel.extract(carrier) : undefined;
    if (!setting.sample(parent !== undefined)) return undefined;
    const exporter = this.otel
      ? this.otel.exporter(parent, traceNowNs())
      : new TritonJsonExporter((text) => this.collect(setting, text), level.timestamps);
    const tree = new TraceTree(exporter, level.tensors && !this.otel);
    return { trace: tree.root, capture: (name, ns) => tree.capture(name, ns), done: () => tree.done() };
  }

  /** Exports buffered OpenTelemetry spans now (tests; the batch processor does it on its own schedule). */
  async flush(): Promise<void> {
    await this.otel?.flush();
  }

  /** Writes every buffered trace, closes the trace files, stops the exporter. */
  async shutdown(): Promise<void> {
    for (const buffer of this.buffers.values()) buffer.flush();
    await Promise.all([...this.files.values()].map((f) => f.close()));
    await this.otel?.shutdown().catch((e: unknown) => this.log.error(`stopping the OpenTelemetry exporter: ${(e as Error).message}`));
  }

  /** A finished trace of `setting` (Triton's TraceSetting::WriteTrace). */
  private collect(setting: TraceSetting, text: string): void {
    setting.collected++;
    const countDone = setting.count === 0 && setting.collected >= setting.created;
    this.buffer(setting).add(text, countDone);
  }

  private buffer(setting: TraceSetting): TraceBuffer {
    let b = this.buffers.get(setting);
    if (!b) {
      const path = setting.values.file;
      let file = this.files.get(path);
      if (!file) {
        file = new TritonTraceFile(path, this.log);
        this.files.set(path, file);
      }
      b = new TraceBuffer(file, setting.values.logFrequency, setting.values.count > 0);
      this.buffers.set(setting, b);
    }
    return b;
  }

  /** A setting replaced by an update (or the server stopping): what it buffered is written now. */
  private retire(setting: TraceSetting): void {
    const b = this.buffers.get(setting);
    if (!b) return;
    b.flush();
    // Traces still in flight under it write straight through (their buffer stays mapped).
  }
}
