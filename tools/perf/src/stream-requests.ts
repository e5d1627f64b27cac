import type { GrpcInferenceServerClient, GrpcInferOptions, InferInput, InferResult, InferenceServerException } from '@tritium/client';

interface Pending {
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/**
 * `--streaming`: every request goes out on one gRPC `ModelStreamInfer` stream, as perf_analyzer's
 * streaming mode does; the only way to reach a decoupled model over gRPC. A request is complete at
 * its final response, not its first: a decoupled model may answer one request many times, and the
 * request's latency (and the closed loop's next send) runs to the last of them. Each request asks for
 * `triton_enable_empty_final_response`, so the final flag arrives even when a model ends a request
 * with a flag and no response; a response without `triton_final_response` (a server that flags only
 * decoupled models) is final.
 */
export class StreamedRequests {
  private readonly pending = new Map<string, Pending>();
  private nextId = 0;
  private open = false;

  constructor(private readonly client: GrpcInferenceServerClient) {}

  infer(model: string, inputs: readonly InferInput[], options: GrpcInferOptions): Promise<void> {
    if (!this.open) {
      this.client.startStream((result, error) => this.onResponse(result, error));
      this.open = true;
    }
    const requestId = `perf-${this.nextId++}`;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(requestId, { resolve, reject });
      this.client.asyncStreamInfer(model, inputs, { ...options, requestId, enableEmptyFinalResponse: true });
    });
  }

  /** Ends the stream; requests still waiting fail. */
  async close(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    await this.client.stopStream();
    this.failAll(new Error('the stream was closed with requests outstanding'));
  }

  private onResponse(result: InferResult | undefined, error: InferenceServerException | undefined): void {
    if (error) {
      // An error names its request only when the server echoes the id. One that does not may have
      // ended the stream (a gRPC status): every outstanding request fails with it (perf stops at
      // the first error anyway, as perf_analyzer does) and the next request opens a new stream.
      const p = result && this.pending.get(result.id);
      if (p) {
        this.pending.delete(result.id);
        p.reject(error);
        return;
      }
      this.failAll(error);
      if (this.open) {
        this.open = false;
        void this.client.stopStream();
      }
      return;
    }
    if (!result) return;
    const final = result.parameters['triton_final_response'];
    if (final === false) return;
    const p = this.pending.get(result.id);
    if (!p) return;
    this.pending.delete(result.id);
    p.resolve();
  }

  private failAll(error: unknown): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(error);
  }
}
