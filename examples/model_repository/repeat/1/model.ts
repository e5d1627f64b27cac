/**
 * Triton's decoupled `repeat` model: for each element of IN, after DELAY[i] milliseconds, one
 * response with OUT = IN[i] and IDX = i; then, after WAIT milliseconds, the final flag. Responses
 * go through each request's response sender, so `execute` returns nothing (Triton's rule for
 * decoupled models).
 */
import {
  InferenceResponse,
  TRITONSERVER_RESPONSE_COMPLETE_FINAL,
  Tensor,
  getInputTensorByName,
  type InferenceRequest,
} from '@tritium/backend-python-like/model';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]): Promise<undefined> {
    await Promise.all(
      requests.map(async (request) => {
        const sender = request.getResponseSender();
        const values = getInputTensorByName(request, 'IN')!.data as Int32Array;
        const delays = getInputTensorByName(request, 'DELAY')?.data as Uint32Array | undefined;
        const wait = getInputTensorByName(request, 'WAIT')?.data as Uint32Array | undefined;
        for (let i = 0; i < values.length; i++) {
          if (delays?.[i]) await sleep(delays[i]!);
          const out = new Tensor('OUT', Int32Array.of(values[i]!), [1]);
          const idx = new Tensor('IDX', Uint32Array.of(i), [1]);
          sender.send(new InferenceResponse({ outputTensors: [out, idx] }));
        }
        if (wait?.[0]) await sleep(wait[0]);
        sender.send(undefined, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
      }),
    );
    return undefined;
  }
}
