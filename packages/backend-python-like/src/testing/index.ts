/**
 * @file `@tritium/backend-python-like/testing`: unit tests for a `model.ts`, without a server.
 * `loadModel(dir)` loads a model folder into the test process (the server's own bundle and
 * instance runtime), runs `initialize`; `execute([...requests])` runs one batched `execute` and
 * returns a response per request and the lines the model logged; `finalize()`. Works under vitest
 * and `node --test` alike.
 *
 * ```ts
 * import { loadModel } from '@tritium/backend-python-like/testing';
 * import type { Spec } from '../model_repository/tokenizer/1/model-types.js';
 *
 * const tokenizer = await loadModel<Spec>('model_repository/tokenizer');
 * const { responses, logs } = await tokenizer.execute([{ TEXT: ['I love this movie'] }, { TEXT: ['meh'] }]);
 * responses[0]!.outputs.INPUT_IDS.data; // BigInt64Array
 * await tokenizer.finalize();
 * ```
 */
export { loadModel } from './load-model.ts';
export type {
  BlsCall,
  LoadModelOptions,
  NestedElements,
  TestElement,
  TestInput,
  TestLogLine,
  TestModel,
  TestRequest,
  TestResponse,
  TestResult,
  TestStreamResult,
} from './test-types.ts';
