import type { GrpcInferenceServerClient, GrpcInferOptions, InferInput, InferResult, InferenceServerException } from '@tritium/client';
import type { StreamOutcome } from './load.ts';

interface Pending {
  readonly resolve: (outcome: StreamOutcome) => void;
  readonly reject: (e: unknown) => void;
  /** Responses so far that count (not the empty final), and when the last of them arrived. */
  responses: number;
  lastResponseMs: number;
}

/**
 * `--streaming`: every request goes out on one gRPC `ModelStreamInfer` stream, as perf_analyzer's
 * streaming mode does; the only way to reach a decoupled model over gRPC. A request is complete at
 * its final response, not its first: a decoupled model may answer one request many times, and the
 * request's latency (and the closed loop's next send) runs to the last of them. Each request asks for
 * `triton_enable_empty_final_response`, so the final flag arrives even when a model ends a request
 * with a flag and no response; a response without `triton_final_response` (a server that flags only
 * decoupled models) is final. The request resolves with what perf_analyzer counts: its responses,
 * less the empty final one (no outputs and the final flag, tritonclient's null response), and when
 * the last of them came.
 */
export class StreamedRequests {
  private readonly pending = new Map<string, Pending>();
  private nextId = 0;
  private open = false;

  constructor(private readonly client: GrpcInferenceServerClient) {}

  infer(model: string, inputs: readonly InferInput[], options: GrpcInferOptions): Promise<StreamOutcome> {
    if (!this.open) {
      this.client.startStream((result, error) => this.onResponse(result, error));
      this.open = true;
    }
    const requestId = `perf-${this.nextId++}`;
    return new Promise<StreamOutcome>((resolve, reject) => {
      this.pending.set(requestId, { resolve, reject, responses: 0, lastResponseMs: 0 });
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
    const p = this.pending.get(result.id);
    if (!p) return;
    const final = result.parameters['triton_final_response'] !== false;
    if (!(final && result.response.outputs.length === 0)) {
      p.responses++;
      p.lastResponseMs = performance.now();
    }
    if (!final) return;
    this.pending.delete(result.id);
    p.resolve({ responses: p.responses, lastResponseMs: p.lastResponseMs });
  }

  private failAll(error: unknown): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(error);
  }
}
