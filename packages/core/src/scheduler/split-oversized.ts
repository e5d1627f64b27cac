/**
 * Splitting oversized requests (beyond Triton, which refuses a request of more rows than
 * `max_batch_size`): opt-in per model with the largest request it accepts,
 *
 *     parameters { key: "tritium.split_rows" value: { string_value: "4096" } }
 *
 * A request is cut into parts, in row order, when it holds more rows than `max_batch_size` (and at
 * most `tritium.split_rows`), or, on a model with a token budget (`tritium.batch_tokens`,
 * token-budget.ts), more padded tokens (rows × dim 1 of its lengths input) than the budget: each
 * part holds at most `max_batch_size` rows and at most `budget / length` of them (at least one; a
 * row longer than the budget runs alone, as it would unsplit). Each part enters the model's
 * scheduler as a request of its own (so parts batch with other requests and run on as many
 * instances as are free), and the answer is the parts' outputs put back together in row order (an
 * output whose dim 1 differs between parts is padded at its end with zeros, as a batch padded to
 * its longest row would be). The first part to fail fails the request, once, with its error, and
 * cancels the parts still queued; a cancelled or expired request cancels every part. Under
 * `preserve_ordering` answers leave in request order, split or not.
 *
 * Without `tritium.split_rows`, a request of several rows over the token budget is refused naming
 * both parameters and the values (as Triton refuses one past `max_batch_size`). Refused at load for
 * models that do not batch, decoupled models and sequence batching (whose requests are one
 * sequence's steps and cannot be reordered).
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import { rowsOf, splitRows } from '../tensor/batch.ts';
import { putRowsBack } from '../tensor/rows.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import type { Scheduler } from './scheduler.ts';
import { BATCH_TOKENS_PARAMETER, type TokenBudget } from './token-budget.ts';

export const SPLIT_ROWS_PARAMETER = 'tritium.split_rows';
/** The largest `tritium.split_rows` accepted (rows of one request). */
export const MAX_SPLIT_ROWS = 1 << 20;

const limits = new WeakMap<object, number | undefined>();

/**
 * Rows a request to `config` may hold: `tritium.split_rows` when the model opts in, else
 * undefined (max_batch_size). Refuses bad values and models that cannot split, naming why.
 */
export function splitRowsOf(config: Pick<ModelConfig, 'name' | 'parameters' | 'max_batch_size'> & Partial<Pick<ModelConfig, 'sequence_batching' | 'model_transaction_policy'>>): number | undefined {
  if (limits.has(config)) return limits.get(config);
  const raw = config.parameters?.[SPLIT_ROWS_PARAMETER]?.string_value;
  let limit: number | undefined;
  if (raw !== undefined) {
    const refuse = (why: string): never => {
      throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${SPLIT_ROWS_PARAMETER}' ${why}, got '${raw}'`);
    };
    limit = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(limit) || limit > MAX_SPLIT_ROWS) refuse(`must be an integer of rows up to ${MAX_SPLIT_ROWS}`);
    if (config.max_batch_size <= 0) refuse('needs max_batch_size > 0 (a model that does not batch has no rows to split)');
    if (limit < config.max_batch_size) refuse(`must be at least max_batch_size (${config.max_batch_size})`);
    if (config.sequence_batching) refuse('cannot be used with sequence_batching (a sequence\'s requests are its steps, in order)');
    if (config.model_transaction_policy?.decoupled) refuse('cannot be used by a decoupled model');
  }
  limits.set(config, limit);
  return limit;
}

/** What a splitting scheduler cuts requests by. */
export interface SplitLimits {
  /** Rows of one part. */
  readonly maxBatchSize: number;
  /** The model's token budget (`tritium.batch_tokens` on a model), if it has one. */
  readonly tokens?: Pick<TokenBudget, 'budget' | 'lengths'>;
  /** `tritium.split_rows` is set: requests past the limits split (else past the budget they are refused). */
  readonly split: boolean;
  /** Answers leave in request order (`preserve_ordering`). */
  readonly preserveOrdering: boolean;
}

/** A request's length in tokens: dim 1 of its lengths input (at least 1, as length grouping counts it). */
function lengthOf(request: InferRequest, input: string): number {
  const t = request.inputs.find((x) => x.name === input);
  return Math.max(1, t && t.shape.length >= 2 ? t.shape[1]! : 0);
}

/**
 * Rows per part of `request` (of `rows` rows) under `limits`, or 0 when it runs whole. Throws
 * INVALID_ARG for a request of several rows over the token budget when splitting is not allowed.
 */
export function partRowsOf(request: InferRequest, rows: number, limits: SplitLimits, model: string): number {
  let per = limits.maxBatchSize;
  const tokens = limits.tokens;
  if (tokens && rows > 1) {
    const length = lengthOf(request, tokens.lengths);
    if (rows * length > tokens.budget) {
      if (!limits.split) {
        throw new InferError(
          'INVALID_ARG',
          `inference request padded tokens must be <= ${tokens.budget} for '${model}' (its '${BATCH_TOKENS_PARAMETER}'), got ${rows} rows x ${length} tokens of input '${tokens.lengths}' = ${rows * length}; '${SPLIT_ROWS_PARAMETER}' lets such a request split into executions`,
        );
      }
      per = Math.min(per, Math.max(1, Math.floor(tokens.budget / length)));
    }
  }
  return rows > per ? per : 0;
}

/** `inner`, with requests past `limits` split into parts (see the top of this file). */
export function splittingScheduler(inner: Scheduler, config: Pick<ModelConfig, 'name' | 'input'>, limits: SplitLimits): Scheduler {
  const shapeTensors = new Set(config.input.filter((i) => i.is_shape_tensor).map((i) => i.name));
  // The previous answer to leave (preserve_ordering): each answer waits for it to settle.
  let previous: Promise<unknown> = Promise.resolve();
  const answer = (request: InferRequest): Promise<InferResponse> => {
    const rows = rowsOf(request);
    let per: number;
    try {
      per = partRowsOf(request, rows, limits, config.name);
    } catch (error) {
      return Promise.reject(error);
    }
    return per === 0 ? inner.enqueue(request) : enqueueParts(inner, request, rows, per, shapeTensors);
  };
  return {
    enqueue: (request) => {
      const answered = answer(request);
      if (!limits.preserveOrdering) return answered;
      answered.catch(() => undefined); // handled here; the caller's handler comes when `previous` settles
      const ordered = previous.then(() => answered);
      previous = ordered.catch(() => undefined);
      return ordered;
    },
    ...(inner.enqueueStream ? { enqueueStream: inner.enqueueStream.bind(inner) } : {}),
    get inflight() {
      return inner.inflight;
    },
    stop: () => inner.stop(),
  };
}

async function enqueueParts(inner: Scheduler, request: InferRequest, rows: number, per: number, shapeTensors: ReadonlySet<string>): Promise<InferResponse> {
  const sizes: number[] = [];
  for (let left = rows; left > 0; left -= per) sizes.push(Math.min(left, per));
  const parts = sizes.map((): Tensor[] => []);
  for (const t of request.inputs) {
    if (shapeTensors.has(t.name)) {
      for (const p of parts) p.push(t);
      continue;
    }
    splitRows(t, sizes).forEach((piece, k) => parts[k]!.push(piece));
  }
  // One signal for the parts: the request's own, or a part's failure (the parts still queued stop).
  const stop = new AbortController();
  const own = request.signal;
  const follow = (): void => stop.abort(own?.reason);
  if (own?.aborted) follow();
  else own?.addEventListener('abort', follow, { once: true });
  let answers: InferResponse[];
  try {
    answers = await Promise.all(
      parts.map((inputs) =>
        inner.enqueue({ ...request, inputs, signal: stop.signal }).catch((error: unknown) => {
          stop.abort(error);
          throw error;
        }),
      ),
    );
  } finally {
    own?.removeEventListener('abort', follow);
  }
  const groups: number[][] = [];
  let row = 0;
  for (const n of sizes) groups.push(Array.from({ length: n }, () => row++));
  const first = answers[0]!;
  const outputs = first.outputs.map((o) => {
    const pieces = answers.map((a) => a.outputs.find((x) => x.name === o.name));
    if (pieces.some((p) => !p)) throw new InferError('INTERNAL', `output '${o.name}' is missing from some parts of request '${request.id}' split by '${SPLIT_ROWS_PARAMETER}'`);
    return putRowsBack(pieces as Tensor[], groups, rows);
  });
  return { ...first, outputs };
}
