/**
 * Triton's backend_common `CompareDimsSupported`: the load-time check every backend makes of the
 * config's dims against the model's own shape, with Triton's messages. Shared so no backend
 * re-implements it.
 */
import { InferError } from '../errors.ts';

/** Triton's ShapeToString: `[-1,16]`. */
export function shapeToString(dims: readonly number[]): string {
  return `[${dims.join(',')}]`;
}

/**
 * Throws INVALID_ARG when the config's `dims` (without the batch dim when max_batch_size > 0)
 * do not fit the model's shape. `exact`: -1 in the model's shape must match -1 in the config
 * (otherwise the model's -1 accepts any configured size).
 */
export function compareDimsSupported(
  model: string,
  tensor: string,
  modelShape: readonly number[],
  dims: readonly number[],
  maxBatchSize: number,
  exact: boolean,
): void {
  const matches = (expected: readonly number[]) =>
    modelShape.length === expected.length && modelShape.every((d, i) => (!exact && d === -1) || d === expected[i]);
  if (maxBatchSize > 0) {
    if (modelShape.length === 0 || modelShape[0] !== -1) {
      throw new InferError(
        'INVALID_ARG',
        `model '${model}', tensor '${tensor}': for the model to support batching the shape should have at least 1 dimension and the first dimension must be -1; but shape expected by the model is ${shapeToString(modelShape)}`,
      );
    }
    const full = [-1, ...dims];
    if (!matches(full)) {
      throw new InferError(
        'INVALID_ARG',
        `model '${model}', tensor '${tensor}': the model expects ${modelShape.length} dimensions (shape ${shapeToString(modelShape)}) but the model configuration specifies ${full.length} dimensions (an initial batch dimension because max_batch_size > 0 followed by the explicit tensor shape, making complete shape ${shapeToString(full)})`,
      );
    }
  } else if (!matches(dims)) {
    throw new InferError(
      'INVALID_ARG',
      `model '${model}', tensor '${tensor}': the model expects ${modelShape.length} dimensions (shape ${shapeToString(modelShape)}) but the model configuration specifies ${dims.length} dimensions (shape ${shapeToString(dims)})`,
    );
  }
}
