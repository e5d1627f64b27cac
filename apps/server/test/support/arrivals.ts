/** Wraps core's InferenceServer for startTestServer so a test knows when a request has reached it. */
import type { InferenceServerApi, InferRequest, ResponseSink } from '@tritium/core';

export interface Arrivals {
  /** The wrapper to pass to startTestServer. */
  readonly wrap: (api: InferenceServerApi) => InferenceServerApi;
  /** Resolves once a request for `model` has reached the server (through infer or inferStream). */
  reached(model: string): Promise<void>;
}

export function arrivals(): Arrivals {
  const seen = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const entry = (model: string) => {
    let e = seen.get(model);
    if (!e) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      e = { promise, resolve };
      seen.set(model, e);
    }
    return e;
  };
  const wrap = (api: InferenceServerApi): InferenceServerApi =>
    new Proxy(api, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key === 'infer') {
          return (r: InferRequest) => {
            const answer = target.infer(r);
            entry(r.model).resolve();
            return answer;
          };
        }
        if (key === 'inferStream') {
          return (r: InferRequest, sink: ResponseSink) => {
            target.inferStream(r, sink);
            entry(r.model).resolve();
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return { wrap, reached: (model) => entry(model).promise };
}
