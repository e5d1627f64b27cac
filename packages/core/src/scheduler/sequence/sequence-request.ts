import { InferError } from '../../errors.ts';
import type { ModelConfig } from '../../config/model-config.ts';
import { batchSizeOf } from '../../tensor/batch.ts';
import type { CorrelationId, InferRequest } from '../../types.ts';
import type { SequenceControls } from './controls.ts';
import { correlationKey, inSequence } from './correlation-id.ts';

/** A request's sequence fields, once Triton's checks for a sequence model passed. */
export interface SequenceRequest {
  /** Requests co-batch only when their keys are equal (the dynamic batcher's shape rules). */
  readonly key: string;
  readonly id: CorrelationId;
  /** The sequence's key (correlationKey of `id`). */
  readonly corr: string;
  readonly start: boolean;
  readonly end: boolean;
}

/**
 * Triton's checks of a request to a sequence model, in its order: batch size 1, equal-shape rules,
 * a correlation ID, the CORRID control's type. Throws INVALID_ARG with Triton's message.
 */
export function checkSequenceRequest(request: InferRequest, config: ModelConfig, controls: SequenceControls, shapeKey: (r: InferRequest) => string): SequenceRequest {
  let key: string;
  try {
    if (batchSizeOf(request, config) > 1) {
      throw new InferError('INVALID_ARG', `inference request to model '${config.name}' must specify batch-size 1 due to requirements of sequence batcher`);
    }
    key = shapeKey(request);
  } catch (e) {
    throw InferError.from(e, 'INVALID_ARG');
  }
  const seq = request.sequence;
  const id = seq?.id;
  if (!inSequence(id)) throw new InferError('INVALID_ARG', `inference request to model '${config.name}' must specify a non-zero or non-empty correlation ID`);
  controls.checkRequest(request, id);
  return { key, id, corr: correlationKey(id), start: seq!.start === true, end: seq!.end === true };
}
