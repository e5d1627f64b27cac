/**
 * Triton's `simple` model: OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 - INPUT1, element-wise
 * over INT32. Works on the whole batch at once: the dynamic batcher's requests arrive stacked by
 * `stackInputs`, and ONE response whose rows the backend splits back to the requests.
 */
import { InferenceResponse, Tensor, stackInputs, type InferenceRequest } from '@tritium/backend-python-like/model';

export default class TritonPythonModel {
  execute(requests: InferenceRequest[]): InferenceResponse[] {
    const input0 = stackInputs(requests, 'INPUT0');
    const input1 = stackInputs(requests, 'INPUT1');
    const a = input0.data as Int32Array;
    const b = input1.data as Int32Array;
    const sum = a.map((x, i) => x + b[i]!);
    const difference = a.map((x, i) => x - b[i]!);
    return [new InferenceResponse({ outputTensors: [new Tensor('OUTPUT0', sum, input0.shape), new Tensor('OUTPUT1', difference, input0.shape)] })];
  }
}
