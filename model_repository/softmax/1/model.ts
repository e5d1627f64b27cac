/**
 * Softmax over the last dimension: the client-side `np.exp(logits) / np.sum(np.exp(logits), axis=1)`
 * of the seed's client, as an in-server postprocessing step. One response for the whole batch.
 */
import {
  InferenceResponse,
  Tensor,
  TritonError,
  getInputTensorByName,
  type InferenceRequest,
} from '@tritium/backend-python-like/model';

export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]): Promise<InferenceResponse[]> {
    const rows: Float32Array[] = [];
    let width = 0;
    for (const request of requests) {
      const logits = getInputTensorByName(request, 'LOGITS');
      if (!logits) throw new TritonError("input 'LOGITS' is missing", TritonError.INVALID_ARG);
      width = logits.shape[logits.shape.length - 1]!;
      rows.push(logits.data as Float32Array);
    }
    const total = rows.reduce((n, r) => n + r.length, 0);
    const probabilities = new Float32Array(total);
    let offset = 0;
    for (const data of rows) {
      for (let row = 0; row < data.length; row += width) {
        // Subtract the row's max first so exp() cannot overflow.
        let max = -Infinity;
        for (let j = 0; j < width; j++) max = Math.max(max, data[row + j]!);
        let sum = 0;
        for (let j = 0; j < width; j++) sum += probabilities[offset + row + j] = Math.exp(data[row + j]! - max);
        for (let j = 0; j < width; j++) probabilities[offset + row + j]! /= sum;
      }
      offset += data.length;
    }
    return [new InferenceResponse({ outputTensors: [new Tensor('PROBABILITIES', probabilities, [total / width, width])] })];
  }
}
