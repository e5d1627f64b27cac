/**
 * The embedding pipeline's last step: the encoder's token embeddings averaged over the tokens the
 * attention mask keeps (padding does not count), then scaled to unit length, so a dot product of
 * two embeddings is their cosine similarity (what OpenAI's embeddings are and what vector stores
 * expect). Each request's rows are pooled on their own; a pipeline batch arrives as one request.
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
    return requests.map((request) => {
      try {
        return new InferenceResponse({ outputTensors: [meanPool(request)] });
      } catch (e) {
        const error = e instanceof TritonError ? e : new TritonError(String(e), TritonError.INTERNAL);
        return new InferenceResponse({ outputTensors: [], error });
      }
    });
  }
}

/** EMBEDDING [rows, hidden] from TOKEN_EMBEDDINGS [rows, tokens, hidden] and ATTENTION_MASK [rows, tokens]. */
function meanPool(request: InferenceRequest): Tensor {
  const tokens = getInputTensorByName(request, 'TOKEN_EMBEDDINGS');
  const mask = getInputTensorByName(request, 'ATTENTION_MASK');
  if (!tokens || !mask) throw new TritonError('TOKEN_EMBEDDINGS and ATTENTION_MASK are required', TritonError.INVALID_ARG);
  const [rows = 0, length = 0, hidden = 0] = tokens.shape;
  if (mask.shape[0] !== rows || mask.shape[1] !== length) {
    throw new TritonError(`ATTENTION_MASK [${mask.shape.join(',')}] does not match TOKEN_EMBEDDINGS [${tokens.shape.join(',')}]`, TritonError.INVALID_ARG);
  }
  const values = tokens.data as Float32Array;
  const keep = mask.data as BigInt64Array;
  const out = new Float32Array(rows * hidden);
  for (let r = 0; r < rows; r++) {
    const sum = new Float64Array(hidden);
    let count = 0;
    for (let t = 0; t < length; t++) {
      if (keep[r * length + t] === 0n) continue;
      count++;
      const at = (r * length + t) * hidden;
      for (let h = 0; h < hidden; h++) sum[h]! += values[at + h]!;
    }
    let norm = 0;
    for (let h = 0; h < hidden; h++) norm += sum[h]! * sum[h]!;
    // The mean's length is the sum's divided by count, so normalizing the sum gives the same vector.
    const scale = count > 0 && norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let h = 0; h < hidden; h++) out[r * hidden + h] = sum[h]! * scale;
  }
  return new Tensor('EMBEDDING', out, [rows, hidden]);
}
