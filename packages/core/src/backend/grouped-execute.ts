/**
 * The execute of a backend that batches inside one instance (ONNX Runtime, TensorRT): what such a
 * backend does around its own run, written once. Each request is checked alone (a bad one fails
 * alone, INVALID_ARG); the rest are grouped by a key saying which can run together (a model that
 * cannot batch runs each request alone); each group is cut to at most `maxRows` rows; each run
 * answers its requests, a failed run failing only its own; once the execute is cancelled, runs not
 * started answer CANCELLED. Timings are summed over the runs in Triton's three compute phases.
 */
import { InferError } from '../errors.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import { splitOutputs } from '../tensor/batch.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { ExecuteOutput, ExecuteResult } from './spi.ts';

/** One request of a run: where it stands in the execute's batch and how many rows it carries. */
export interface RunMember {
  readonly request: InferRequest;
  readonly index: number;
  readonly rows: number;
}

/** Nanoseconds spent per compute phase, added to by every run. */
export interface RunTimings {
  input: bigint;
  infer: bigint;
  output: bigint;
}

export interface GroupedExecuteOptions {
  readonly model: string;
  /** Whether the model batches (`max_batch_size > 0`); if not, each request runs alone. */
  readonly batching: boolean;
  /** Most rows one run may carry (default: no limit beyond the model's). */
  readonly maxRows?: number;
  readonly signal: AbortSignal;
  /** Checks one request and returns its rows; throws (INVALID_ARG unless said otherwise) to refuse it. */
  check(request: InferRequest): number;
  /** Requests with the same key can run together. */
  key(request: InferRequest): string;
  /** Runs requests together: one result per member, in order. */
  run(members: readonly RunMember[], timings: RunTimings): readonly ExecuteResult[] | Promise<readonly ExecuteResult[]>;
  /** The error each member of a failed run answers (default `InferError.from`). */
  runError?(error: unknown): InferError;
}

export async function executeInGroups(batch: readonly InferRequest[], o: GroupedExecuteOptions): Promise<ExecuteOutput> {
  const timings: RunTimings = { input: 0n, infer: 0n, output: 0n };
  const results: ExecuteResult[] = new Array(batch.length);
  const groups = new Map<string, RunMember[]>();
  const t0 = process.hrtime.bigint();
  batch.forEach((request, index) => {
    try {
      const rows = o.check(request);
      const key = o.batching ? o.key(request) : `#${index}`;
      const group = groups.get(key) ?? [];
      group.push({ request, index, rows });
      groups.set(key, group);
    } catch (err) {
      results[index] = InferError.from(err, 'INVALID_ARG');
    }
  });
  timings.input += process.hrtime.bigint() - t0;
  for (const group of groups.values()) {
    for (const members of runsOf(group, o.maxRows ?? Number.POSITIVE_INFINITY)) {
      let answers: readonly ExecuteResult[];
      if (o.signal.aborted) {
        answers = members.map(() => new InferError('CANCELLED', `request for model '${o.model}' was cancelled`));
      } else {
        try {
          answers = await o.run(members, timings);
        } catch (err) {
          const error = o.runError ? o.runError(err) : InferError.from(err);
          answers = members.map(() => error);
        }
      }
      members.forEach((m, k) => (results[m.index] = answers[k]!));
    }
  }
  return {
    results,
    timings: { computeInputNs: Number(timings.input), computeInferNs: Number(timings.infer), computeOutputNs: Number(timings.output) },
  };
}

/** Cuts a group into runs of at most `maxRows` rows (each request already fits alone). */
function* runsOf(group: readonly RunMember[], maxRows: number): Generator<RunMember[]> {
  let run: RunMember[] = [];
  let rows = 0;
  for (const m of group) {
    if (run.length > 0 && rows + m.rows > maxRows) {
      yield run;
      run = [];
      rows = 0;
    }
    run.push(m);
    rows += m.rows;
  }
  if (run.length > 0) yield run;
}

/**
 * The responses of one run from its outputs: split back per request by rows when the model
 * batches, else the single request's outputs (only those it asked for, when it asked).
 */
export function answersOfRun(
  members: readonly RunMember[],
  outputs: readonly Tensor[],
  o: { readonly model: string; readonly version: number; readonly batching: boolean },
): InferResponse[] {
  const requests = members.map((m) => m.request);
  if (o.batching) return splitOutputs(requests, outputs, { model: o.model, version: o.version, rows: members.map((m) => m.rows) });
  const r = requests[0]!;
  const mine = r.outputs && r.outputs.length > 0 ? new Set(r.outputs.map((t) => t.name)) : undefined;
  return [{ id: r.id, model: o.model, version: o.version, outputs: outputs.filter((t) => !mine || mine.has(t.name)) }];
}

/** The config outputs a run must fetch: those some member asked for (all of them when one named none). */
export function outputsToFetch<T extends { readonly name: string }>(members: readonly RunMember[], configOutputs: readonly T[]): T[] {
  const wanted = new Set<string>();
  for (const { request } of members) {
    if (!request.outputs || request.outputs.length === 0) return [...configOutputs];
    for (const o of request.outputs) wanted.add(o.name);
  }
  return configOutputs.filter((o) => wanted.has(o.name));
}
