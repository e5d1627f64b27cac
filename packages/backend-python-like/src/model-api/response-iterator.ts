/**
 * What `exec({ decoupled: true })` returns (Triton's `ResponseIterator`): every response the callee
 * streams, in order, ending as Triton's iterator does when the final flag comes on its own (the
 * way Tritium's streams always end) with an empty response, or with an error response when the
 * call failed. The call starts at once; iterating only reads what arrived. `cancel()` cancels the
 * call (its request is cancelled in the callee, so a model watching `isCancelled()` can stop); the
 * iterator then ends with whatever the callee still sent and the cancellation error.
 */
import type { InferResponse, InferError } from '@tritium/core';
import { InferenceResponse } from './response.ts';
import { TritonError, toTritonError } from './errors.ts';
import { Tensor } from './tensor.ts';

interface Item {
  readonly response: InferenceResponse;
  readonly last: boolean;
}

export class ResponseIterator implements AsyncIterable<InferenceResponse> {
  /** Every response so far: each loop over the iterator reads them from the start (as Triton's does once finished). */
  readonly #items: Item[] = [];
  readonly #waiting = new Set<() => void>();
  #finished = false;
  #cancel: (() => void) | undefined;

  /** `start` runs the call, feeding this iterator, and returns how to cancel it (instance runtime only). */
  constructor(start: (sink: { response(r: InferResponse): void; complete(error?: InferError): void }) => { cancel(): void } | void) {
    const handle = start({
      response: (r) => this.#push({ response: toAuthorResponse(r), last: false }),
      complete: (error) =>
        this.#push({ response: error ? errorResponse(toTritonError(error)) : new InferenceResponse({ outputTensors: [] }), last: true }),
    });
    this.#cancel = handle ? () => handle.cancel() : undefined;
  }

  /** An iterator holding only `error` (the call could not start). */
  static failed(error: TritonError): ResponseIterator {
    return new ResponseIterator((sink) => sink.complete(error));
  }

  /** Cancels the call if it is still running (Triton's `ResponseIterator.cancel()`). */
  cancel(): void {
    if (!this.#finished) this.#cancel?.();
  }

  #push(item: Item): void {
    if (this.#finished) return;
    if (item.last) this.#finished = true;
    this.#items.push(item);
    for (const wake of this.#waiting) wake();
    this.#waiting.clear();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<InferenceResponse> {
    for (let next = 0; ; next++) {
      while (next >= this.#items.length) await new Promise<void>((resolve) => this.#waiting.add(resolve));
      const item = this.#items[next]!;
      yield item.response;
      if (item.last) return;
    }
  }
}

export function errorResponse(error: TritonError): InferenceResponse {
  return new InferenceResponse({ outputTensors: [], error });
}

export function toAuthorResponse(response: InferResponse): InferenceResponse {
  return new InferenceResponse({
    outputTensors: response.outputs.map((t) => Tensor.fromWire(t)),
    ...(response.parameters ? { parameters: response.parameters } : {}),
  });
}
