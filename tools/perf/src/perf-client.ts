import { grpc, http, InferInput, type GrpcInferenceServerClient, type HttpInferenceServerClient, type ModelStatistics } from '@tritium/client';
import type { ModelConfigInit } from '@tritium/client/proto';
import type { Protocol } from './options.ts';
import type { StreamOutcome } from './load.ts';
import { StreamedRequests } from './stream-requests.ts';

/** One input of a prepared request. */
export interface RequestInput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: number[];
  /** Typed array for numeric types, strings for BYTES. */
  readonly data: ArrayBufferView | readonly string[];
}

/** What the perf tool needs from a server, over either protocol, through `@tritium/client`. */
export interface PerfClient {
  metadata(model: string, version: string): Promise<ModelMetadata>;
  /** The model's config as the server gives it (fields it leaves out are absent). */
  config(model: string, version: string): Promise<ModelConfigInit>;
  /** Triton's statistics (`model_stats`), or undefined when the server has no statistics. */
  statistics(model: string, version: string): Promise<ModelStatistics[] | undefined>;
  /** Whether the server lists the `statistics` extension. */
  hasStatistics(): Promise<boolean>;
  /** Sends one prepared request (inputs built once, reused); a streamed one resolves with its responses. */
  infer(model: string, version: string, inputs: readonly InferInput[]): Promise<void | StreamOutcome>;
  close(): void;
}

export interface ModelMetadata {
  readonly name: string;
  readonly platform?: string;
  readonly inputs: ReadonlyArray<{ name: string; datatype: string; shape: Array<number | string> }>;
  readonly outputs: ReadonlyArray<{ name: string; datatype: string; shape: Array<number | string> }>;
}

/** Builds the client's InferInput objects once per distinct request. */
export function toInferInputs(inputs: readonly RequestInput[]): InferInput[] {
  return inputs.map((i) =>
    new InferInput(i.name, i.shape, i.datatype as never).setData(i.data as never, { binary: true }),
  );
}

/** What every request of a session carries: `-H` headers and `--request-parameter` parameters. */
export interface PerfRequestOptions {
  readonly headers?: Readonly<Record<string, string>>;
  readonly parameters?: Readonly<Record<string, string | number | boolean>>;
  /** `--streaming` (gRPC only): requests go out on one `ModelStreamInfer` stream, complete at their final response. */
  readonly streaming?: boolean;
}

/** A `PerfClient` over `@tritium/client`'s HTTP or gRPC InferenceServerClient. */
export function createPerfClient(protocol: Protocol, url: string, concurrency = 16, extra: PerfRequestOptions = {}): PerfClient {
  const headers = extra.headers ?? {};
  const params = extra.parameters ? { parameters: { ...extra.parameters } } : {};
  if (protocol === 'grpc') {
    const c: GrpcInferenceServerClient = new grpc.InferenceServerClient(url, { headers });
    const stream = extra.streaming ? new StreamedRequests(c) : undefined;
    return {
      metadata: (m, v) => c.getModelMetadata(m, v),
      config: async (m, v) => (await c.getModelConfig(m, v)).config ?? {},
      statistics: async (m, v) => (await c.getInferenceStatistics(m, v)).model_stats,
      hasStatistics: async () => (await c.getServerMetadata()).extensions.includes('statistics'),
      infer: stream
        ? (m, v, inputs) => stream.infer(m, inputs, { ...params, ...(v ? { modelVersion: v } : {}) })
        : async (m, v, inputs) => {
            await c.infer(m, inputs, { ...params, ...(v ? { modelVersion: v } : {}) });
          },
      close: () => {
        // The client closes the stream with its channel.
        c.close();
      },
    };
  }
  if (extra.streaming) throw new Error('streaming is only allowed with gRPC protocol');
  const c: HttpInferenceServerClient = new http.InferenceServerClient(url, { concurrency: Math.max(concurrency, 1), headers });
  return {
    metadata: (m, v) => c.getModelMetadata(m, v || undefined),
    config: (m, v) => c.getModelConfig(m, v || undefined),
    statistics: async (m, v) => (await c.getInferenceStatistics(m, v || undefined)).model_stats,
    hasStatistics: async () => (await c.getServerMetadata()).extensions.includes('statistics'),
    infer: async (m, v, inputs) => {
      await c.infer(m, inputs, { ...params, ...(v ? { modelVersion: v } : {}) });
    },
    close: () => c.close(),
  };
}
