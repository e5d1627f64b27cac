/** The model check of Triton's trace setting handlers (HTTP and gRPC alike). */
import { InferError } from '@tritium/core';
import type { TransportContext } from '../protocol/context.ts';

/** A per-model trace setting needs the model ready: INVALID_ARG `Request for unknown model : <name>` (Triton's words). */
export function checkTraceModel(ctx: Pick<TransportContext, 'api'>, model: string | undefined): void {
  if (model && !ctx.api.modelReady(model)) throw new InferError('INVALID_ARG', `Request for unknown model : ${model}`);
}
