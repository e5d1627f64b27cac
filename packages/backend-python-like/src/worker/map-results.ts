import { InferError, type InferRequest, type ModelConfig, type Parameters, type Tensor as WireTensor } from '@tritium/core';
import { rowsOf, splitOutputs, type ExecuteResult } from '@tritium/core/backend';
import { type WorkerExecuteOutput } from '@tritium/core/worker';
import { checkOutputs } from './check-outputs.ts';

/** One author response, reduced to plain data. */
export interface PlainResponse {
  readonly error?: InferError;
  readonly outputs: readonly WireTensor[];
  readonly parameters?: Parameters;
}

export interface MapContext {
  readonly config: ModelConfig;
  readonly version: number;
  /** Per request: the output names it asked for (all outputs when it named none). */
  readonly requested: readonly (readonly string[])[];
}

/**
 * Copies a tensor into a fresh buffer, for a decoupled response: its sink transfers (detaches) whole
 * buffers, and the model may keep its arrays. An execute's results need no copy: they go with
 * `keepOutputs`, so the host copies what it would otherwise transfer (small tensors are packed by
 * copy anyway); a copy here cost an ArrayBuffer per output per request.
 */
function owned(t: WireTensor): WireTensor {
  const data = new Uint8Array(t.data.byteLength);
  data.set(t.data);
  return { name: t.name, datatype: t.datatype, shape: t.shape, data };
}

function rowsFor(config: ModelConfig, request: Omit<InferRequest, 'signal'>): number | undefined {
  return config.max_batch_size > 0 ? rowsOf(request) : undefined;
}

/** One response for one request: its error, or its checked and filtered outputs (copied when `copy`, see owned). */
export function answerOne(
  response: PlainResponse,
  request: Omit<InferRequest, 'signal'>,
  requested: readonly string[],
  ctx: Pick<MapContext, 'config' | 'version'>,
  copy: boolean,
): ExecuteResult {
  if (response.error) return response.error;
  const checked = checkOutputs(ctx.config, response.outputs, rowsFor(ctx.config, request), requested);
  if (InferError.is(checked)) return checked;
  return {
    id: request.id,
    model: ctx.config.name,
    version: ctx.version,
    outputs: copy ? checked.map(owned) : checked,
    ...(response.parameters ? { parameters: response.parameters } : {}),
  };
}

/**
 * Maps what `execute` returned to one result per request: one response per request, or ONE
 * response whose outputs' dim 0 is the batch total, split by rows. Anything else throws an INTERNAL
 * error (failing the whole batch) saying what was expected. When every request wants the same
 * outputs (the usual case: none named), ONE checked response goes back whole and the host splits
 * it by the rows of its own requests (WholeBatchOutput): what crosses is then 2 tensors, not 64,
 * for the example tokenizer's 32 requests.
 */
export function mapResults(
  responses: readonly PlainResponse[],
  batch: readonly Omit<InferRequest, 'signal'>[],
  ctx: MapContext,
): WorkerExecuteOutput {
  const model = ctx.config.name;
  const n = batch.length;
  // The model may keep (and return again) its arrays: none is detached (see owned).
  if (responses.length === n) return { results: responses.map((r, i) => answerOne(r, batch[i]!, ctx.requested[i]!, ctx, false)), keepOutputs: true };
  const union = unionOf(ctx.requested);
  if (responses.length === 1 && !responses[0]!.error && union === ctx.requested[0]) {
    const total = batch.reduce((sum, r) => sum + rowsOf(r), 0);
    const checked = checkOutputs(ctx.config, responses[0]!.outputs, ctx.config.max_batch_size > 0 ? total : undefined, union);
    // Anything that would not split (its error named below) takes the per-request path.
    if (!InferError.is(checked) && checked.every((t) => t.shape.length > 0 && t.shape[0] === total)) {
      // The host gives each request's response the whole's parameters (wire-check's wholeResults).
      const parameters = responses[0]!.parameters;
      return { whole: { id: '', model, version: ctx.version, outputs: checked, ...(parameters ? { parameters } : {}) }, keepOutputs: true };
    }
  }
  // Split views of the model's arrays: the host copies what it would otherwise transfer.
  return { results: splitResults(responses, batch, ctx), keepOutputs: true };
}

function splitResults(
  responses: readonly PlainResponse[],
  batch: readonly Omit<InferRequest, 'signal'>[],
  ctx: MapContext,
): ExecuteResult[] {
  const model = ctx.config.name;
  const n = batch.length;
  const rows = batch.map((r) => rowsOf(r));
  const total = rows.reduce((a, b) => a + b, 0);
  const expected = (): string => `expected ${n} (one per request) or 1 whose outputs' first dimension equals the batch total ${total}`;
  if (responses.length !== 1) {
    throw new InferError('INTERNAL', `model '${model}' execute returned ${responses.length} responses for ${n} requests; ${expected()}`);
  }
  const whole = responses[0]!;
  if (whole.error) return batch.map(() => whole.error!);
  const union = unionOf(ctx.requested);
  const checked = checkOutputs(ctx.config, whole.outputs, ctx.config.max_batch_size > 0 ? total : undefined, union);
  if (InferError.is(checked)) {
    // A batch-total mismatch is a wrong-count error; say so rather than "shape".
    const bad = whole.outputs.find((t) => t.shape[0] !== total);
    if (bad) {
      throw new InferError(
        'INTERNAL',
        `model '${model}' execute returned 1 response for ${n} requests whose output '${bad.name}' has first dimension ${bad.shape[0] ?? 'none'}; ${expected()}`,
      );
    }
    return batch.map(() => checked);
  }
  const split = splitOutputs(batch as InferRequest[], checked, { model, version: ctx.version, rows });
  // The one response's parameters are every request's (as on the whole-batch path).
  const parameters = whole.parameters ? { parameters: whole.parameters } : {};
  return split.map((response, i) => {
    const wanted = ctx.requested[i]!;
    // The common case: the request wants what every request wants, so its pieces are already in that order.
    if (wanted === union) return { ...response, ...parameters };
    return { ...response, ...parameters, outputs: wanted.map((name) => response.outputs.find((t) => t.name === name)!).filter(Boolean) };
  });
}

/**
 * The outputs any request of the batch wants, each once, in first-asked order. Requests that named
 * none share one list (every output), so a batch of them needs no merging: this runs per execute,
 * and `Array.prototype.flat` over 32 lists alone cost ~10 µs.
 */
function unionOf(requested: readonly (readonly string[])[]): readonly string[] {
  const first = requested[0] ?? [];
  if (requested.every((r) => r === first)) return first;
  const names = new Set<string>();
  for (const list of requested) for (const name of list) names.add(name);
  return [...names];
}
