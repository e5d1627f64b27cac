/**
 * Splitting oversized requests (beyond Triton, which refuses a request of more rows than
 * `max_batch_size`): opt-in per model with the largest request it accepts,
 *
 *     parameters { key: "tritium.split_rows" value: { string_value: "4096" } }
 *
 * A request of more rows than `max_batch_size` (and at most `tritium.split_rows`) is cut into parts
 * of at most `max_batch_size` rows, in order; each part enters the model's scheduler as a request of
 * its own (so parts batch with other requests and run on as many instances as are free), and the
 * answer is the parts' outputs put back together in row order (an output whose dim 1 differs between
 * parts is padded at its end with zeros, as a batch padded to its longest row would be). The first
 * part to fail fails the request with its error; a cancelled or expired request cancels every part.
 * Refused at load for models that do not batch, decoupled models and sequence batching (whose
 * requests are one sequence's steps and cannot be reordered).
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import { rowsOf, splitRows } from '../tensor/batch.ts';
import { putRowsBack } from '../tensor/rows.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import type { Scheduler } from './scheduler.ts';

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

/** `inner`, with requests of more rows than `maxBatchSize` split into parts of at most that many. */
export function splittingScheduler(inner: Scheduler, config: Pick<ModelConfig, 'name' | 'input'>, maxBatchSize: number): Scheduler {
  const shapeTensors = new Set(config.input.filter((i) => i.is_shape_tensor).map((i) => i.name));
  return {
    enqueue: (request) => {
      const rows = rowsOf(request);
      if (rows <= maxBatchSize) return inner.enqueue(request);
      return enqueueParts(inner, request, rows, maxBatchSize, shapeTensors);
    },
    ...(inner.enqueueStream ? { enqueueStream: inner.enqueueStream.bind(inner) } : {}),
    get inflight() {
      return inner.inflight;
    },
    stop: () => inner.stop(),
  };
}

async function enqueueParts(inner: Scheduler, request: InferRequest, rows: number, maxBatchSize: number, shapeTensors: ReadonlySet<string>): Promise<InferResponse> {
  const sizes: number[] = [];
  for (let left = rows; left > 0; left -= maxBatchSize) sizes.push(Math.min(left, maxBatchSize));
  const parts = sizes.map((): Tensor[] => []);
  for (const t of request.inputs) {
    if (shapeTensors.has(t.name)) {
      for (const p of parts) p.push(t);
      continue;
    }
    splitRows(t, sizes).forEach((piece, k) => parts[k]!.push(piece));
  }
  const answers = await Promise.all(parts.map((inputs) => inner.enqueue({ ...request, inputs })));
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
