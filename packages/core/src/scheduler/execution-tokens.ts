/**
 * The tokens one execution computed on, for the token statistics (tritium_inference_padded_tokens):
 * what a pipeline's length group says it holds (InferRequest.tokens), or, for a model that pads
 * requests to the longest (`tritium.pad.<INPUT>`), each request's own length (dim 1 of its token
 * input) against the length it was padded to.
 */
import type { InferRequest, TokenCount } from '../types.ts';

/** Tokens of an execution of `requests` (as sent, `padded`); undefined when nothing says. */
export function executionTokens(requests: readonly InferRequest[], padded: readonly InferRequest[], tokenInput: string | undefined): TokenCount | undefined {
  let real = 0;
  let total = 0;
  let known = false;
  for (let i = 0; i < requests.length; i++) {
    const own = requests[i]!;
    if (own.tokens) {
      real += own.tokens.real;
      total += own.tokens.padded;
      known = true;
      continue;
    }
    if (tokenInput === undefined) continue;
    const before = own.inputs.find((t) => t.name === tokenInput);
    const after = padded[i]!.inputs.find((t) => t.name === tokenInput);
    if (!before || !after || before.shape.length !== 2 || after.shape.length !== 2) continue;
    real += before.shape[0]! * before.shape[1]!;
    total += after.shape[0]! * after.shape[1]!;
    known = true;
  }
  return known ? { real, padded: total } : undefined;
}
