/**
 * Length-aware batching in a model's dynamic batcher (`tritium.batch_tokens` on a model, beyond
 * Triton): of the batch formation chose, only the queue head's length group is sent
 * (length-groups.ts over the requests' own lengths, dim 1 of the lengths input, each request kept
 * whole); the others stay queued, in their order, and head the next batches. The head always goes,
 * so nothing waits longer than it would in a FIFO batch, and every batch stays within the budget
 * (a request alone may exceed it).
 */
import type { InferRequest } from '../types.ts';
import { groupByLength } from './length-groups.ts';
import type { TokenBudget } from './token-budget.ts';

/** What the grouping reads of a queued request. */
interface Grouped {
  readonly request: InferRequest;
  readonly batchSize: number;
}

/** A request's length: dim 1 of its lengths input (0 when it has none). */
function lengthOf(request: InferRequest, input: string): number {
  const t = request.inputs.find((x) => x.name === input);
  return t && t.shape.length >= 2 ? t.shape[1]! : 0;
}

/** The entries of `entries[0]`'s length group, in queue order. */
export function headLengthGroup<E extends Grouped>(entries: E[], budget: TokenBudget, maxRows: number): E[] {
  if (entries.length < 2) return entries;
  const lengths = entries.map((e) => lengthOf(e.request, budget.lengths));
  const groups = groupByLength(lengths, { budget: budget.budget, maxRows, executionTokens: budget.executionTokens }, entries.map((e) => e.batchSize));
  const head = groups.find((g) => g.includes(0))!;
  if (head.length === entries.length) return entries;
  return head.sort((a, b) => a - b).map((i) => entries[i]!);
}
